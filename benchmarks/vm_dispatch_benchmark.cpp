// SPDX-License-Identifier: Apache-2.0
// BM_Vm_DispatchPerNode: the VM's cost per node on a chain of 1000 scalar-sized elementwise nodes,
// where kernels do almost nothing, so the figure is dispatch (plus, when on, the profiler's own
// cost). Reported as ns_per_node; compare the two arguments for the profiler's added cost.
#include <benchmark/benchmark.h>

#include "tscope/tscope.h"

namespace {

constexpr int kNodes = 1000;

tscope::Function chain_function(bool profile) {
  using namespace tscope;
  Variable x = vector(DType::Float32, "x");
  Variable y = x;
  // Alternate two ops so no rewrite can collapse the chain; every node is a real kernel call.
  for (int i = 0; i < kNodes; ++i) y = (i % 2 == 0) ? y + 1.0 : y * 0.5;
  FunctionOptions options;
  options.name = profile ? "chain (profiled)" : "chain";
  options.profile = profile;
  options.allow_gc = true;
  return function({x}, {y}, {}, options);
}

void BM_Vm_DispatchPerNode(benchmark::State& state) {
  const bool profile = state.range(0) != 0;
  tscope::Function f = chain_function(profile);
  const std::vector<tscope::Tensor> inputs = {tscope::Tensor::zeros(tscope::DType::Float32, {1})};
  const auto nodes = static_cast<double>(f.graph().toposort().size());
  for (auto _ : state) {
    std::vector<tscope::Tensor> outputs = f(inputs);
    benchmark::DoNotOptimize(outputs);
  }
  state.counters["nodes"] = nodes;
  state.counters["ns_per_node"] = benchmark::Counter(
      nodes * static_cast<double>(state.iterations()) * 1e-9,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(profile ? "profiling on" : "profiling off");
}
BENCHMARK(BM_Vm_DispatchPerNode)->Arg(0)->Arg(1)->ArgName("profile");

}  // namespace

BENCHMARK_MAIN();
