// SPDX-License-Identifier: Apache-2.0
// BM_Pool and BM_BatchNorm: the pooling nodes and the batch-normalisation composite against the
// oneDNN primitives that do the same work, timed call by call and alternately (paired_timing.h).
// - Pooling "Forward" is the MaxPool / AvgPool node against oneDNN's inference pooling; "Grad" is
//   MaxPoolGrad (oneDNN's training forward, for the argmax workspace, then the backward pass, as
//   the node does) or AvgPoolGrad (the backward pass alone).
// - Batch norm "Train" is the training-mode composite (y, batch mean, batch variance; the running
//   averages left out, as oneDNN has none) against batch_normalization_forward in training mode;
//   "Infer" uses given statistics; "Grad" is the function of y's gradient with respect to x, gamma
//   and beta (its graph recomputes the statistics) against the training forward plus backward.
#include <benchmark/benchmark.h>

#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "dnnl_bench_util.h"
#include "paired_timing.h"
#include "tscope/tscope.h"

namespace {
using tscope::Dims;
using tscope::DType;
using tscope::Tensor;
using tscope::Variable;
using tscope::bench::filled;
using tscope::bench::FunctionCall;
using tscope::bench::plain;
using tscope::bench::PrimitivesCall;
using tscope::bench::shape_constant;

// ---- pooling --------------------------------------------------------------------------------

struct PoolCase {
  const char* name;
  Dims x;
  std::int64_t kernel, stride, pad;
  bool max;
};

const std::vector<PoolCase>& pool_cases() {
  static const std::vector<PoolCase> all = {
      {"r18_maxpool_b1", {1, 64, 112, 112}, 3, 2, 1, true},
      {"r18_maxpool_b8", {8, 64, 112, 112}, 3, 2, 1, true},
      {"voxel_maxpool0_b8", {8, 8, 16, 16, 16}, 2, 2, 0, true},
      {"voxel_maxpool1_b8", {8, 16, 8, 8, 8}, 2, 2, 0, true},
      {"avgpool2d_b4", {4, 256, 14, 14}, 2, 2, 0, false},
      {"avgpool3d_b8", {8, 8, 16, 16, 16}, 3, 2, 1, false},
  };
  return all;
}

Dims pool_output(const PoolCase& c) {
  Dims y{c.x[0], c.x[1]};
  for (int axis = 2; axis < c.x.rank(); ++axis) {
    y.push_back((c.x[axis] + 2 * c.pad - c.kernel) / c.stride + 1);
  }
  return y;
}

void BM_Pool(benchmark::State& state, const PoolCase& c, bool grad) {
  using namespace tscope;
  const auto rank = static_cast<std::size_t>(c.x.rank() - 2);
  const Dims y_shape = pool_output(c);
  const PoolOptions options{.kernel = std::vector<std::int64_t>(rank, c.kernel),
                            .strides = std::vector<std::int64_t>(rank, c.stride),
                            .padding = Padding::symmetric(std::vector<std::int64_t>(rank, c.pad)),
                            .include_pad = false};
  Variable x = tensor(DType::Float32, c.x, "x");
  Variable dy = tensor(DType::Float32, y_shape, "dy");
  std::unique_ptr<FunctionCall> node;
  if (!grad) {
    node = std::make_unique<FunctionCall>(
        std::vector<Variable>{x},
        std::vector<Variable>{c.max ? max_pool(x, options) : avg_pool(x, options)},
        std::vector<Tensor>{filled(c.x)});
  } else if (c.max) {
    node = std::make_unique<FunctionCall>(std::vector<Variable>{x, dy},
                                          std::vector<Variable>{max_pool_grad(x, dy, options)},
                                          std::vector<Tensor>{filled(c.x), filled(y_shape)});
  } else {
    node = std::make_unique<FunctionCall>(
        std::vector<Variable>{dy},
        std::vector<Variable>{avg_pool_grad(dy, shape_constant(c.x), options)},
        std::vector<Tensor>{filled(y_shape)});
  }

  PrimitivesCall direct;
  const auto x_md = plain(c.x);
  const auto y_md = plain(y_shape);
  const dnnl::memory::dims strides(rank, c.stride);
  const dnnl::memory::dims kernel(rank, c.kernel);
  const dnnl::memory::dims pads(rank, c.pad);
  const dnnl::algorithm algorithm =
      c.max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
  const auto forward_pd = [&](dnnl::prop_kind kind) {
    return dnnl::pooling_forward::primitive_desc(
        dnnl::pooling_forward::desc(kind, algorithm, x_md, y_md, strides, kernel, pads, pads),
        direct.engine());
  };
  const dnnl::memory xm = direct.memory(x_md, c.x);
  const dnnl::memory ym = direct.memory(y_md, y_shape);
  if (!grad) {
    const auto pd = forward_pd(dnnl::prop_kind::forward_inference);
    direct.add(dnnl::pooling_forward(pd), {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DST, ym}});
    state.SetLabel(pd.impl_info_str());
  } else {
    const auto hint = forward_pd(dnnl::prop_kind::forward_training);
    const dnnl::pooling_backward::primitive_desc pd(
        dnnl::pooling_backward::desc(algorithm, x_md, y_md, strides, kernel, pads, pads),
        direct.engine(), hint);
    const dnnl::memory dxm = direct.memory(x_md, c.x);
    const dnnl::memory dym = direct.memory(y_md, y_shape);
    std::unordered_map<int, dnnl::memory> backward_args = {{DNNL_ARG_DIFF_DST, dym},
                                                           {DNNL_ARG_DIFF_SRC, dxm}};
    if (c.max) {
      const dnnl::memory workspace = direct.scratch(hint.workspace_desc());
      direct.add(dnnl::pooling_forward(hint),
                 {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DST, ym}, {DNNL_ARG_WORKSPACE, workspace}});
      backward_args[DNNL_ARG_WORKSPACE] = workspace;
    }
    direct.add(dnnl::pooling_backward(pd), backward_args);
    state.SetLabel(pd.impl_info_str());
  }
  direct();  // warm-up, as for the node
  tscope::bench::time_pair(state, *node, direct);
}

// ---- batch normalisation --------------------------------------------------------------------

struct NormCase {
  const char* name;
  Dims x;
};

const std::vector<NormCase>& norm_cases() {
  static const std::vector<NormCase> all = {
      {"r18_layer1_b8", {8, 64, 56, 56}},
      {"r18_layer4_b8", {8, 512, 7, 7}},
      {"voxel_b8", {8, 16, 16, 16, 16}},
  };
  return all;
}

enum class NormPass { Train, Infer, Grad };

void BM_BatchNorm(benchmark::State& state, const NormCase& c, NormPass pass) {
  using namespace tscope;
  constexpr double kEpsilon = 1e-5;
  const Dims channels{c.x[1]};
  Variable x = tensor(DType::Float32, c.x, "x");
  Variable gamma = tensor(DType::Float32, channels, "gamma");
  Variable beta = tensor(DType::Float32, channels, "beta");
  Variable mean = tensor(DType::Float32, channels, "mean");
  Variable var = tensor(DType::Float32, channels, "var");
  Variable dy = tensor(DType::Float32, c.x, "dy");
  const BatchNormOptions options{.epsilon = kEpsilon};
  const Tensor positive = filled(channels, 1.0);  // a variance and a scale away from 0
  std::unique_ptr<FunctionCall> node;
  if (pass == NormPass::Infer) {
    node = std::make_unique<FunctionCall>(
        std::vector<Variable>{x, gamma, beta, mean, var},
        std::vector<Variable>{batch_norm_inference(x, gamma, beta, mean, var, options)},
        std::vector<Tensor>{filled(c.x), positive, filled(channels), filled(channels), positive});
  } else {
    const BatchNormTraining bn = batch_norm_train(x, gamma, beta, mean, var, options);
    if (pass == NormPass::Train) {
      node = std::make_unique<FunctionCall>(
          std::vector<Variable>{x, gamma, beta, mean, var},
          std::vector<Variable>{bn.y, bn.batch_mean, bn.batch_var},
          std::vector<Tensor>{filled(c.x), positive, filled(channels), filled(channels), positive});
    } else {
      const std::vector<Variable> grads = grad(sum(bn.y * dy), {x, gamma, beta});
      node = std::make_unique<FunctionCall>(
          std::vector<Variable>{x, gamma, beta, mean, var, dy}, grads,
          std::vector<Tensor>{filled(c.x), positive, filled(channels), filled(channels), positive,
                              filled(c.x, 0.02)});
    }
  }

  PrimitivesCall direct;
  const auto x_md = plain(c.x);
  const auto c_md = plain(channels);
  const auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  const auto forward_pd = [&](dnnl::prop_kind kind, dnnl::normalization_flags extra) {
    return dnnl::batch_normalization_forward::primitive_desc(
        dnnl::batch_normalization_forward::desc(kind, x_md, static_cast<float>(kEpsilon),
                                                flags | extra),
        direct.engine());
  };
  const dnnl::memory xm = direct.memory(x_md, c.x);
  const dnnl::memory ym = direct.memory(x_md, c.x);
  const dnnl::memory scale = direct.memory(c_md, channels);
  const dnnl::memory shift = direct.memory(c_md, channels);
  const dnnl::memory mean_m = direct.memory(c_md, channels);
  const dnnl::memory var_m = direct.memory(c_md, channels);
  std::unordered_map<int, dnnl::memory> forward_args = {
      {DNNL_ARG_SRC, xm},      {DNNL_ARG_DST, ym},      {DNNL_ARG_SCALE, scale},
      {DNNL_ARG_SHIFT, shift}, {DNNL_ARG_MEAN, mean_m}, {DNNL_ARG_VARIANCE, var_m}};
  if (pass == NormPass::Infer) {
    const auto pd =
        forward_pd(dnnl::prop_kind::forward_inference, dnnl::normalization_flags::use_global_stats);
    direct.add(dnnl::batch_normalization_forward(pd), forward_args);
    state.SetLabel(pd.impl_info_str());
  } else {
    const auto pd = forward_pd(dnnl::prop_kind::forward_training, dnnl::normalization_flags::none);
    direct.add(dnnl::batch_normalization_forward(pd), forward_args);
    state.SetLabel(pd.impl_info_str());
    if (pass == NormPass::Grad) {
      const dnnl::batch_normalization_backward::primitive_desc backward_pd(
          dnnl::batch_normalization_backward::desc(dnnl::prop_kind::backward, x_md, x_md,
                                                   static_cast<float>(kEpsilon), flags),
          direct.engine(), pd);
      direct.add(dnnl::batch_normalization_backward(backward_pd),
                 {{DNNL_ARG_SRC, xm},
                  {DNNL_ARG_DIFF_DST, direct.memory(x_md, c.x)},
                  {DNNL_ARG_MEAN, mean_m},
                  {DNNL_ARG_VARIANCE, var_m},
                  {DNNL_ARG_SCALE, scale},
                  {DNNL_ARG_SHIFT, shift},
                  {DNNL_ARG_DIFF_SRC, direct.memory(x_md, c.x)},
                  {DNNL_ARG_DIFF_SCALE, direct.memory(c_md, channels)},
                  {DNNL_ARG_DIFF_SHIFT, direct.memory(c_md, channels)}});
    }
  }
  direct();
  tscope::bench::time_pair(state, *node, direct);
}

int register_all() {
  for (const PoolCase& c : pool_cases()) {
    for (const bool grad : {false, true}) {
      const std::string name = std::string("BM_Pool/") + c.name + (grad ? "/Grad" : "/Forward");
      benchmark::RegisterBenchmark(name.c_str(), BM_Pool, c, grad)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    }
  }
  const std::pair<NormPass, const char*> passes[] = {
      {NormPass::Train, "Train"}, {NormPass::Infer, "Infer"}, {NormPass::Grad, "Grad"}};
  for (const NormCase& c : norm_cases()) {
    for (const auto& [pass, pass_name] : passes) {
      const std::string name = std::string("BM_BatchNorm/") + c.name + "/" + pass_name;
      benchmark::RegisterBenchmark(name.c_str(), BM_BatchNorm, c, pass)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    }
  }
  return 0;
}
const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
