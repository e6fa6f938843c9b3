// SPDX-License-Identifier: Apache-2.0
// BM_Compile_DeepMlpTraining: function() on the training graph of a deep MLP (tanh layers, a
// squared-error loss, its gradient and SGD updates), from about 1,000 to 10,000 apply nodes.
// The graph and its gradient are built once; each iteration clones, rewrites, verifies and links
// it, which is what a user waits for. per_node is the compile time divided by the node count
// before rewriting: a flat per_node over the range means compile time grows linearly.
#include <benchmark/benchmark.h>

#include "tscope/tscope.h"

namespace {

struct TrainingGraph {
  std::vector<tscope::Variable> inputs;
  std::vector<tscope::Variable> outputs;
  std::vector<tscope::Update> updates;
};

TrainingGraph deep_mlp_training(int layers) {
  using namespace tscope;
  constexpr std::int64_t kWidth = 16;
  Variable x = matrix(DType::Float32, "x");
  Variable y = matrix(DType::Float32, "y");
  std::vector<Variable> params;
  Variable h = x;
  for (int layer = 0; layer < layers; ++layer) {
    Variable w = shared(Tensor::zeros(DType::Float32, {kWidth, kWidth}), "W" + std::to_string(layer));
    Variable b = shared(Tensor::zeros(DType::Float32, {kWidth}), "b" + std::to_string(layer));
    h = tanh(dot(h, w) + b);
    params.push_back(w);
    params.push_back(b);
  }
  Variable loss = mean(sqr(h - y));
  const std::vector<Variable> grads = grad(loss, params);
  TrainingGraph graph{{x, y}, {loss}, {}};
  for (std::size_t i = 0; i < params.size(); ++i) {
    graph.updates.push_back({params[i], params[i] - grads[i] * 0.01});
  }
  return graph;
}

std::int64_t nodes_before_rewriting(const TrainingGraph& graph) {
  std::vector<tscope::Variable> roots = graph.outputs;
  for (const tscope::Update& update : graph.updates) roots.push_back(update.new_value);
  return static_cast<std::int64_t>(tscope::FunctionGraph::clone_of(graph.inputs, roots).node_count());
}

void BM_Compile_DeepMlpTraining(benchmark::State& state) {
  const TrainingGraph graph = deep_mlp_training(static_cast<int>(state.range(0)));
  const auto nodes = static_cast<double>(nodes_before_rewriting(graph));
  for (auto _ : state) {
    tscope::Function f = tscope::function(graph.inputs, graph.outputs, graph.updates);
    benchmark::DoNotOptimize(f);
  }
  state.counters["nodes"] = nodes;
  state.counters["per_node"] =
      benchmark::Counter(nodes * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
// 16 layers give about 300 nodes, 92 about the second seed's 1,288, 700 about 10,000.
BENCHMARK(BM_Compile_DeepMlpTraining)
    ->ArgName("layers")
    ->Arg(16)
    ->Arg(92)
    ->Arg(350)
    ->Arg(700)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
