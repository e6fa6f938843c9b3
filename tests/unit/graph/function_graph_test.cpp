// SPDX-License-Identifier: Apache-2.0
// FunctionGraph's clients index: who reads each value, kept right through replace(), with nodes
// joining and leaving the graph and listeners told in order. check_index() compares the index
// with a rebuild from the outputs after every step of a random rewrite sequence.
#include <random>

#include "support/test_util.h"
#include "tscope/graph/function_graph.h"
#include "tscope/ops/registry.h"

namespace tscope {
namespace {
using testing::contains;
using testing::error_of;

class Recorder final : public GraphListener {
 public:
  void on_import(ApplyNode& node) override { events.push_back("+" + std::string(node.op().name)); }
  void on_prune(ApplyNode& node) override { events.push_back("-" + std::string(node.op().name)); }
  void on_change_input(ApplyNode& node, int index, const Variable&, const Variable&) override {
    events.push_back("~" + std::string(node.op().name) + "." + std::to_string(index));
  }
  std::vector<std::string> events;
};

TEST(FunctionGraph, ClientsAfterCloneListEveryReader) {
  Variable x = vector(DType::Float32, "x");
  Variable b = exp(x);
  Variable c = b * b;
  Variable d = c + b;
  FunctionGraph graph = FunctionGraph::clone_of({x}, {d, c});
  const std::vector<ApplyNode*> order = graph.toposort();
  ASSERT_EQ(order.size(), 3u);
  const Variable exp_out = order[0]->output(0);
  const Variable mul_out = order[1]->output(0);
  EXPECT_EQ(graph.client_count(exp_out), 3u);  // twice by the product, once by the sum
  EXPECT_EQ(graph.client_count(mul_out), 2u);  // the sum and output 1
  EXPECT_TRUE(graph.is_output(mul_out));
  EXPECT_FALSE(graph.is_output(exp_out));
  EXPECT_EQ(graph.clients(graph.inputs()[0]).size(), 1u);
  EXPECT_EQ(graph.node_count(), 3u);
  EXPECT_NO_THROW(graph.check_index());
}

TEST(FunctionGraph, ReplaceRewiresReadersAndPrunesWhatNobodyReads) {
  Variable x = vector(DType::Float32, "x");
  Variable d = sqr(neg(exp(x)));
  FunctionGraph graph = FunctionGraph::clone_of({x}, {d});
  Recorder recorder;
  graph.add_listener(&recorder);
  const std::vector<ApplyNode*> order = graph.toposort();
  const Variable gx = graph.inputs()[0];
  // sqr(neg(exp(x))) -> sqr(log(tanh(x))): neg and exp leave, tanh then log join.
  graph.replace(order[1]->output(0), log(tanh(gx)));
  EXPECT_EQ(recorder.events,
            (std::vector<std::string>{"+Tanh", "+Log", "~Sqr.0", "-Neg", "-Exp"}));
  EXPECT_EQ(graph.node_count(), 3u);
  EXPECT_EQ(graph.client_count(gx), 1u);
  EXPECT_TRUE(graph.contains(*order[2]));
  EXPECT_FALSE(graph.contains(*order[0]));
  EXPECT_NO_THROW(graph.check_index());
  graph.remove_listener(&recorder);
  // Pruned nodes stay alive until release_replaced(), so the raw pointers above are still valid.
  EXPECT_EQ(order[0]->op().name, "Exp");
  graph.release_replaced();
  EXPECT_EQ(graph.toposort().size(), 3u);
}

TEST(FunctionGraph, ReplacingAnOutputMovesTheOutput) {
  Variable x = vector(DType::Float32, "x");
  FunctionGraph graph = FunctionGraph::clone_of({x}, {exp(x)});
  const Variable old_output = graph.outputs()[0];
  const Variable replacement = tanh(graph.inputs()[0]);
  graph.replace(old_output, replacement);
  EXPECT_EQ(graph.outputs()[0], replacement);
  EXPECT_TRUE(graph.is_output(replacement));
  EXPECT_EQ(graph.node_count(), 1u);
  EXPECT_NO_THROW(graph.check_index());
}

TEST(FunctionGraph, ReplacementThatReadsTheOldValueIsInsertedAfterIt) {
  Variable x = vector(DType::Float32, "x");
  FunctionGraph graph = FunctionGraph::clone_of({x}, {sqr(exp(x))});
  const Variable e = graph.toposort()[0]->output(0);
  const Variable wrapped = neg(e);
  graph.replace(e, wrapped);  // sqr(exp(x)) -> sqr(neg(exp(x)))
  EXPECT_EQ(graph.node_count(), 3u);
  EXPECT_EQ(graph.clients(e).size(), 1u);
  EXPECT_EQ(graph.clients(e)[0].node, wrapped.owner());
  EXPECT_NO_THROW(graph.check_index());
}

TEST(FunctionGraph, ReplaceRejectsAnotherTypeAndAReaderOfItself) {
  Variable x = vector(DType::Float32, "x");
  Variable b = exp(x);
  Variable c = b * 2.0;
  FunctionGraph graph = FunctionGraph::clone_of({x}, {c + b});
  const std::vector<ApplyNode*> order = graph.toposort();
  const Error mismatch = error_of([&] { graph.replace(order[0]->output(0), matrix(DType::Float32, "m")); });
  EXPECT_EQ(mismatch.kind(), ErrorKind::TypeMismatch);
  // exp(x) read by the product: making the product read itself would be a cycle.
  const Error cycle = error_of([&] { graph.replace(order[0]->output(0), order[1]->output(0)); });
  EXPECT_EQ(cycle.kind(), ErrorKind::Internal);
  EXPECT_TRUE(contains(cycle, "read its own output")) << cycle.what();
}

// Random graphs of unary and binary nodes; each step replaces a random value by a new node over
// random earlier values (or by an earlier value of the same type), then checks the index.
TEST(FunctionGraph, IndexStaysRightThroughRandomReplacements) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 20; ++trial) {
    Variable x = vector(DType::Float64, "x");
    Variable y = vector(DType::Float64, "y");
    std::vector<Variable> values{x, y};
    for (int i = 0; i < 30; ++i) {
      const Variable& a = values[random() % values.size()];
      const Variable& b = values[random() % values.size()];
      values.push_back(random() % 3 == 0 ? exp(a) : (random() % 2 == 0 ? a + b : a * b));
    }
    FunctionGraph graph = FunctionGraph::clone_of({x, y}, {values.back(), values[values.size() - 5]});
    for (int step = 0; step < 25; ++step) {
      const std::vector<ApplyNode*> order = graph.toposort();
      if (order.size() < 2) break;
      const std::size_t target = random() % order.size();
      const Variable old_value = order[target]->output(0);
      // Any value the target does not feed may replace it: inputs and earlier nodes.
      std::vector<Variable> candidates = graph.inputs();
      for (std::size_t i = 0; i < target; ++i) candidates.push_back(order[i]->output(0));
      const Variable& p = candidates[random() % candidates.size()];
      const Variable& q = candidates[random() % candidates.size()];
      const Variable replacement = random() % 2 == 0 ? p : tanh(p) - q;
      graph.replace(old_value, replacement);
      ASSERT_NO_THROW(graph.check_index()) << "trial " << trial << " step " << step;
      ASSERT_EQ(graph.node_count(), graph.toposort().size());
      graph.release_replaced();
    }
  }
}

}  // namespace
}  // namespace tscope
