// SPDX-License-Identifier: Apache-2.0
// BM_Vm_DispatchPerNode: the VM's cost per node on a chain of 1000 scalar-sized elementwise nodes,
// where kernels do almost nothing, so the figure is dispatch (plus, when on, the profiler's own
// cost). Reported as ns_per_node; compare profile=0, 1 and 2 (profiling with the timeline) for
// the profiler's and the timeline's added costs.
// BM_Function_CallOverhead: one call of a three-node function on one-element tensors, so the
// figure is the call's fixed cost (taking an execution frame, binding inputs and shared values,
// collecting outputs). BM_Function_ConcurrentCalls: calls/s of one small network called from 1
// and 2 threads at once (one Function object); items_per_second is the sum over threads.
#include <benchmark/benchmark.h>

#include "tscope/profile/trace_recorder.h"
#include "tscope/tscope.h"

namespace {

constexpr int kNodes = 1000;

tscope::Function chain_function(bool profile, bool allow_gc) {
  using namespace tscope;
  Variable x = vector(DType::Float32, "x");
  Variable y = x;
  // Alternate two ops so no rewrite can collapse the chain; every node is a real kernel call.
  for (int i = 0; i < kNodes; ++i) y = (i % 2 == 0) ? y + 1.0 : y * 0.5;
  FunctionOptions options;
  options.name = profile ? "chain (profiled)" : "chain";
  options.profile = profile;
  // allow_gc=false keeps every output buffer for the next call, so kernels reuse it instead of
  // allocating: the figure is then closest to pure dispatch.
  options.allow_gc = allow_gc;
  // Fusion would make the chain a few Composite nodes, and in-place writes would spare the
  // allocating path: the figure is meant to be one node's dispatch.
  options.excluded_rewrites = {"fuse_elementwise", "use_inplace"};
  return function({x}, {y}, {}, options);
}

void BM_Vm_DispatchPerNode(benchmark::State& state) {
  const bool profile = state.range(0) != 0;
  const bool trace = state.range(0) == 2;
  const bool allow_gc = state.range(1) != 0;
  tscope::Function f = chain_function(profile, allow_gc);
  tscope::profile::set_tracing(trace);
  const std::vector<tscope::Tensor> inputs = {tscope::Tensor::zeros(tscope::DType::Float32, {1})};
  const auto nodes = static_cast<double>(f.graph().toposort().size());
  for (auto _ : state) {
    std::vector<tscope::Tensor> outputs = f(inputs);
    benchmark::DoNotOptimize(outputs);
  }
  state.counters["nodes"] = nodes;
  // Seconds per node (shown with an SI prefix, e.g. "35ns").
  state.counters["per_node"] =
      benchmark::Counter(nodes * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(trace ? "profiling and timeline on" : profile ? "profiling on" : "profiling off");
  tscope::profile::set_tracing(false);
}
BENCHMARK(BM_Vm_DispatchPerNode)
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->ArgNames({"profile", "allow_gc"})
    ->UseRealTime();

void BM_Function_CallOverhead(benchmark::State& state) {
  using namespace tscope;
  Variable x = vector(DType::Float32, "x");
  Variable scale = shared(Tensor::scalar(2.0, DType::Float32), "scale");
  FunctionOptions options;
  options.allow_gc = false;
  Function f = function({x}, {exp(x * scale) + 1.0}, {}, options);
  const std::vector<Tensor> inputs = {Tensor::zeros(DType::Float32, {1})};
  for (auto _ : state) {
    std::vector<Tensor> outputs = f(inputs);
    benchmark::DoNotOptimize(outputs);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Function_CallOverhead)->UseRealTime();

// One network per allow_gc setting, shared by the benchmark's threads: built once, by the first
// thread to arrive.
tscope::Function& small_network(bool allow_gc) {
  using namespace tscope;
  auto build = [](bool gc) {
    Variable x = matrix(DType::Float32, "x");
    Variable w1 = shared(Tensor::full(DType::Float32, {64, 64}, 0.01), "w1");
    Variable w2 = shared(Tensor::full(DType::Float32, {64, 10}, 0.02), "w2");
    Variable hidden = tanh(dot(x, w1) + 0.5);
    FunctionOptions options;
    options.allow_gc = gc;
    return new Function(function({x}, {softmax(dot(hidden, w2))}, {}, options));
  };
  static Function* with_gc = build(true);
  static Function* kept_buffers = build(false);
  return allow_gc ? *with_gc : *kept_buffers;
}

void BM_Function_ConcurrentCalls(benchmark::State& state) {
  using namespace tscope;
  Function& f = small_network(state.range(0) != 0);
  const std::vector<Tensor> inputs = {Tensor::full(DType::Float32, {16, 64}, 0.5)};
  for (auto _ : state) {
    std::vector<Tensor> outputs = f(inputs);
    benchmark::DoNotOptimize(outputs);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Function_ConcurrentCalls)
    ->ArgName("allow_gc")
    ->Arg(1)
    ->Arg(0)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
