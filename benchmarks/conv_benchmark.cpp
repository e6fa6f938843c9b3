// SPDX-License-Identifier: Apache-2.0
// BM_Conv: one convolution direction (Forward, GradI = ConvGradI, GradW = ConvGradW) on one shape.
// "pair" times, call by call and alternately, a compiled function whose graph is that one node
// (profiling off, allow_gc=false so the output buffer is reused) and the same oneDNN primitive the
// node builds (plain layouts, created once) called directly; its counters are the medians
// (paired_timing.h). "ref" times the reference loops (small shapes only). docs/conv.md has the
// table.
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

// The node, compiled into a one-node function, with its inputs.
FunctionCall node_call(const ConvCase& c, Direction direction, bool reference) {
  using namespace tscope;
  const Shapes s = shapes_of(c);
  const std::size_t rank = c.spatial.size();
  ConvOptions options{.strides = std::vector<std::int64_t>(rank, c.stride),
                      .padding = Padding::symmetric(std::vector<std::int64_t>(rank, c.pad))};
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
  return FunctionCall({a, b}, {out}, {filled(a.type().dims), filled(b.type().dims)}, reference);
}

// The oneDNN primitive the node builds, created once, with its memory objects.
std::unique_ptr<PrimitivesCall> primitive_call(const ConvCase& c,
                                               Direction direction,
                                               std::string& impl) {
  auto direct = std::make_unique<PrimitivesCall>();
  const Shapes s = shapes_of(c);
  const std::size_t rank = c.spatial.size();
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
  const dnnl::engine& engine = direct->engine();
  const dnnl::memory xm = direct->memory(x_md, s.x);
  const dnnl::memory wm = direct->memory(w_md, s.w);
  const dnnl::memory ym = direct->memory(y_md, s.y);
  if (direction == Direction::Forward) {
    const dnnl::convolution_forward::primitive_desc pd(
        forward_desc(dnnl::prop_kind::forward_inference), engine);
    direct->add(dnnl::convolution_forward(pd),
                {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}});
    impl = pd.impl_info_str();
  } else {
    const dnnl::convolution_forward::primitive_desc hint(
        forward_desc(dnnl::prop_kind::forward_training), engine);
    if (direction == Direction::GradI) {
      const dnnl::convolution_backward_data::primitive_desc pd(
          dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, x_md, w_md,
                                                y_md, strides, dilates, pads, pads),
          engine, hint);
      direct->add(dnnl::convolution_backward_data(pd),
                  {{DNNL_ARG_DIFF_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DIFF_DST, ym}});
      impl = pd.impl_info_str();
    } else {
      const dnnl::convolution_backward_weights::primitive_desc pd(
          dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, x_md, w_md,
                                                   y_md, strides, dilates, pads, pads),
          engine, hint);
      direct->add(dnnl::convolution_backward_weights(pd),
                  {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DIFF_WEIGHTS, wm}, {DNNL_ARG_DIFF_DST, ym}});
      impl = pd.impl_info_str();
    }
  }
  (*direct)();  // warm-up, as for the node
  return direct;
}

void BM_ConvPair(benchmark::State& state, const ConvCase& c, Direction direction) {
  std::string impl;
  FunctionCall node = node_call(c, direction, /*reference=*/false);
  const std::unique_ptr<PrimitivesCall> primitive = primitive_call(c, direction, impl);
  state.SetLabel(impl);
  tscope::bench::time_pair(state, node, *primitive);
}

void BM_ConvRef(benchmark::State& state, const ConvCase& c, Direction direction) {
  FunctionCall node = node_call(c, direction, /*reference=*/true);
  for (auto _ : state) node();
}

int register_all() {
  const std::pair<Direction, const char*> directions[] = {
      {Direction::Forward, "Forward"}, {Direction::GradI, "GradI"}, {Direction::GradW, "GradW"}};
  for (const ConvCase& c : cases()) {
    for (const auto& [direction, direction_name] : directions) {
      const std::string name = std::string("BM_Conv/") + c.name + "/" + direction_name;
      benchmark::RegisterBenchmark((name + "/pair").c_str(), BM_ConvPair, c, direction)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
      if (c.small) {
        benchmark::RegisterBenchmark((name + "/ref").c_str(), BM_ConvRef, c, direction)
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
