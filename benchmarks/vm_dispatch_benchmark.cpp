// SPDX-License-Identifier: Apache-2.0
// BM_Vm_DispatchPerNode: the VM's cost per node on a chain of 1000 scalar-sized elementwise nodes,
// where kernels do almost nothing, so the figure is dispatch (plus, when on, the profiler's own
// cost). Reported as ns_per_node; compare the two arguments for the profiler's added cost.
#include <benchmark/benchmark.h>

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
  return function({x}, {y}, {}, options);
}

void BM_Vm_DispatchPerNode(benchmark::State& state) {
  const bool profile = state.range(0) != 0;
  const bool allow_gc = state.range(1) != 0;
  tscope::Function f = chain_function(profile, allow_gc);
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
  state.SetLabel(profile ? "profiling on" : "profiling off");
}
BENCHMARK(BM_Vm_DispatchPerNode)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"profile", "allow_gc"})
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
