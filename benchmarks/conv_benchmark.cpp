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
using tscope::bench::plain;
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
class NodeCall {
 public:
  NodeCall(const ConvCase& c, Direction direction, bool reference) {
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
    function_ = std::make_unique<Function>(function({a, b}, {out}, {}, function_options));
    inputs_ = {filled(a.type().dims), filled(b.type().dims)};
    (*this)();  // the first call builds the node's oneDNN primitive; time the steady state
  }
  void operator()() {
    std::vector<Tensor> outputs = (*function_)(inputs_);
    benchmark::DoNotOptimize(outputs);
  }

 private:
  std::unique_ptr<tscope::Function> function_;
  std::vector<Tensor> inputs_;
};

// The oneDNN primitive the node builds, created once, with its memory objects.
class PrimitiveCall {
 public:
  PrimitiveCall(const ConvCase& c, Direction direction, std::string& impl)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
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
    tensors_ = {filled(s.x), filled(s.w), filled(s.y)};
    const auto memory = [&](const dnnl::memory::desc& md, const Tensor& t) {
      return dnnl::memory(md, engine_, const_cast<void*>(t.raw_data()));
    };
    const dnnl::memory xm = memory(x_md, tensors_[0]);
    const dnnl::memory wm = memory(w_md, tensors_[1]);
    const dnnl::memory ym = memory(y_md, tensors_[2]);
    if (direction == Direction::Forward) {
      const dnnl::convolution_forward::primitive_desc pd(
          forward_desc(dnnl::prop_kind::forward_inference), engine_);
      primitive_ = dnnl::convolution_forward(pd);
      args_ = {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}};
      impl = pd.impl_info_str();
    } else {
      const dnnl::convolution_forward::primitive_desc hint(
          forward_desc(dnnl::prop_kind::forward_training), engine_);
      if (direction == Direction::GradI) {
        const dnnl::convolution_backward_data::primitive_desc pd(
            dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, x_md, w_md,
                                                  y_md, strides, dilates, pads, pads),
            engine_, hint);
        primitive_ = dnnl::convolution_backward_data(pd);
        args_ = {{DNNL_ARG_DIFF_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DIFF_DST, ym}};
        impl = pd.impl_info_str();
      } else {
        const dnnl::convolution_backward_weights::primitive_desc pd(
            dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, x_md,
                                                     w_md, y_md, strides, dilates, pads, pads),
            engine_, hint);
        primitive_ = dnnl::convolution_backward_weights(pd);
        args_ = {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DIFF_WEIGHTS, wm}, {DNNL_ARG_DIFF_DST, ym}};
        impl = pd.impl_info_str();
      }
    }
    (*this)();  // warm-up, as for the node
  }
  void operator()() {
    primitive_.execute(stream_, args_);
    stream_.wait();
  }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::vector<Tensor> tensors_;
  dnnl::primitive primitive_;
  std::unordered_map<int, dnnl::memory> args_;
};

void BM_ConvPair(benchmark::State& state, const ConvCase& c, Direction direction) {
  std::string impl;
  NodeCall node(c, direction, /*reference=*/false);
  PrimitiveCall primitive(c, direction, impl);
  state.SetLabel(impl);
  tscope::bench::time_pair(state, node, primitive);
}

void BM_ConvRef(benchmark::State& state, const ConvCase& c, Direction direction) {
  NodeCall node(c, direction, /*reference=*/true);
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
