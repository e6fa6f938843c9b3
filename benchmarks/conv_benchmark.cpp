// SPDX-License-Identifier: Apache-2.0
// BM_Conv: one convolution direction (Forward, GradI = ConvGradI, GradW = ConvGradW) on one shape,
// three ways: "tscope" (a compiled function whose graph is that one node, profiling off,
// allow_gc=false so the output buffer is reused), "dnnl" (the same oneDNN primitive the node
// builds, plain layouts, created once and executed in the loop) and "ref" (the reference loops,
// small shapes only). docs/conv.md compares tscope with dnnl.
#include <benchmark/benchmark.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "tscope/tscope.h"

namespace {
using tscope::DType;
using tscope::Dims;
using tscope::Tensor;
using tscope::Variable;

struct ConvCase {
  const char* name;
  std::int64_t n, c, o;
  std::vector<std::int64_t> spatial;
  std::int64_t kernel, stride, pad;
  bool small;  ///< also time the reference loops
};

const std::vector<ConvCase>& cases() {
  static const std::vector<ConvCase> all = {
      {"r18_conv1_b1", 1, 3, 64, {224, 224}, 7, 2, 3, false},
      {"r18_layer1_b1", 1, 64, 64, {56, 56}, 3, 1, 1, false},
      {"r18_layer3_b4", 4, 256, 256, {14, 14}, 3, 1, 1, false},
      {"r18_layer4_b2", 2, 512, 512, {7, 7}, 3, 1, 1, false},
      {"voxel_conv0_b8", 8, 2, 8, {16, 16, 16}, 3, 1, 1, true},
      {"voxel_conv1_b8", 8, 8, 16, {8, 8, 8}, 3, 1, 1, true},
      {"tiny2d_2x3x7x5", 2, 3, 4, {7, 5}, 3, 1, 1, true},
  };
  return all;
}

enum class Direction { Forward, GradI, GradW };
enum class Way { Tscope, Dnnl, Ref };

struct Shapes {
  Dims x, w, y;
};

Shapes shapes_of(const ConvCase& c) {
  Shapes s{{c.n, c.c}, {c.o, c.c}, {c.n, c.o}};
  for (std::int64_t extent : c.spatial) {
    s.x.push_back(extent);
    s.w.push_back(c.kernel);
    s.y.push_back((extent + 2 * c.pad - c.kernel) / c.stride + 1);
  }
  return s;
}

Tensor filled(const Dims& shape) {
  std::vector<double> values(static_cast<std::size_t>(shape.product()));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<double>(i % 7) * 0.1 - 0.3;
  }
  return Tensor::from_doubles(DType::Float32, shape, values);
}

dnnl::memory::desc plain(const Dims& shape) {
  const dnnl::memory::dims dims(shape.begin(), shape.end());
  const Dims strides = tscope::contiguous_strides(shape);
  return {dims, dnnl::memory::data_type::f32, dnnl::memory::dims(strides.begin(), strides.end())};
}

// A shape as the 1-D int64 constant the gradient ops take.
Variable shape_constant(const Dims& shape) {
  const std::vector<std::int64_t> extents(shape.begin(), shape.end());
  return tscope::constant(
      Tensor::from_vector<std::int64_t>({static_cast<std::int64_t>(extents.size())}, extents));
}

void run_tscope(benchmark::State& state, const ConvCase& c, Direction direction, bool reference) {
  using namespace tscope;
  const Shapes s = shapes_of(c);
  const std::size_t rank = c.spatial.size();
  ConvOptions options{.strides = std::vector<std::int64_t>(rank, c.stride),
                      .padding = Padding::symmetric(std::vector<std::int64_t>(rank, c.pad))};
  FunctionOptions function_options;
  function_options.allow_gc = false;
  function_options.reference_kernels = reference;
  Variable a = tensor(DType::Float32, direction == Direction::GradI ? s.w : s.x, "a");
  Variable b = tensor(DType::Float32, direction == Direction::Forward ? s.w : s.y, "b");
  Variable out;
  if (direction == Direction::Forward) {
    out = conv(a, b, options);
  } else if (direction == Direction::GradI) {
    out = conv_grad_inputs(a, b, shape_constant(s.x), options);
  } else {
    out = conv_grad_weights(a, b, shape_constant(s.w), options);
  }
  Function f = function({a, b}, {out}, {}, function_options);
  const std::vector<Tensor> inputs = {filled(a.type().dims), filled(b.type().dims)};
  (void)f(inputs);  // the first call builds the node's oneDNN primitive; time the steady state
  for (auto _ : state) {
    std::vector<Tensor> outputs = f(inputs);
    benchmark::DoNotOptimize(outputs);
  }
}

void run_dnnl(benchmark::State& state, const ConvCase& c, Direction direction) {
  const Shapes s = shapes_of(c);
  const std::size_t rank = c.spatial.size();
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const auto x_md = plain(s.x);
  const auto w_md = plain(s.w);
  const auto y_md = plain(s.y);
  const dnnl::memory::dims strides(rank, c.stride);
  const dnnl::memory::dims dilates(rank, 0);
  const dnnl::memory::dims pads(rank, c.pad);
  const auto forward_desc = [&](dnnl::prop_kind kind) {
    return dnnl::convolution_forward::desc(kind, dnnl::algorithm::convolution_direct, x_md, w_md,
                                           y_md, strides, dilates, pads, pads);
  };
  const Tensor x = filled(s.x);
  const Tensor w = filled(s.w);
  const Tensor y = filled(s.y);
  dnnl::memory xm(x_md, engine, const_cast<void*>(x.raw_data()));
  dnnl::memory wm(w_md, engine, const_cast<void*>(w.raw_data()));
  dnnl::memory ym(y_md, engine, const_cast<void*>(y.raw_data()));
  dnnl::primitive primitive;
  std::unordered_map<int, dnnl::memory> args;
  if (direction == Direction::Forward) {
    const dnnl::convolution_forward::primitive_desc pd(
        forward_desc(dnnl::prop_kind::forward_inference), engine);
    primitive = dnnl::convolution_forward(pd);
    args = {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}};
    state.SetLabel(pd.impl_info_str());
  } else {
    const dnnl::convolution_forward::primitive_desc hint(
        forward_desc(dnnl::prop_kind::forward_training), engine);
    if (direction == Direction::GradI) {
      const dnnl::convolution_backward_data::primitive_desc pd(
          dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, x_md, w_md,
                                                y_md, strides, dilates, pads, pads),
          engine, hint);
      primitive = dnnl::convolution_backward_data(pd);
      args = {{DNNL_ARG_DIFF_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DIFF_DST, ym}};
      state.SetLabel(pd.impl_info_str());
    } else {
      const dnnl::convolution_backward_weights::primitive_desc pd(
          dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, x_md,
                                                   w_md, y_md, strides, dilates, pads, pads),
          engine, hint);
      primitive = dnnl::convolution_backward_weights(pd);
      args = {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DIFF_WEIGHTS, wm}, {DNNL_ARG_DIFF_DST, ym}};
      state.SetLabel(pd.impl_info_str());
    }
  }
  primitive.execute(stream, args);  // warm-up, as for the node
  stream.wait();
  for (auto _ : state) {
    primitive.execute(stream, args);
    stream.wait();
  }
}

void BM_Conv(benchmark::State& state, const ConvCase& c, Direction direction, Way way) {
  if (way == Way::Dnnl) {
    run_dnnl(state, c, direction);
  } else {
    run_tscope(state, c, direction, way == Way::Ref);
  }
}

int register_all() {
  const std::pair<Direction, const char*> directions[] = {
      {Direction::Forward, "Forward"}, {Direction::GradI, "GradI"}, {Direction::GradW, "GradW"}};
  const std::pair<Way, const char*> ways[] = {
      {Way::Tscope, "tscope"}, {Way::Dnnl, "dnnl"}, {Way::Ref, "ref"}};
  for (const ConvCase& c : cases()) {
    for (const auto& [direction, direction_name] : directions) {
      for (const auto& [way, way_name] : ways) {
        if (way == Way::Ref && !c.small) continue;
        const std::string name =
            std::string("BM_Conv/") + c.name + "/" + direction_name + "/" + way_name;
        benchmark::RegisterBenchmark(name.c_str(), BM_Conv, c, direction, way)
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
      }
    }
  }
  return 0;
}
const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
