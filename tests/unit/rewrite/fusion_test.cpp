// SPDX-License-Identifier: Apache-2.0
// fuse_elementwise: groups of elementwise nodes (and a Sum or Max over them) become Composite
// nodes computing the same values; values read outside a group, graph outputs and non-float ops
// are boundaries; gradient graphs fuse too. Each test compiles the same outputs with and without
// the rule and compares the values.
#include <map>
#include <string>

#include "support/graph_counts.h"
#include "support/test_util.h"

namespace tscope {
namespace {

using testing::op_counts;

std::vector<const ApplyNode*> composites(const Function& f) {
  std::vector<const ApplyNode*> found;
  for (const ApplyNode* node : f.graph().toposort()) {
    if (node->op().name == "Composite") found.push_back(node);
  }
  return found;
}

Function compile(const std::vector<Variable>& inputs, const std::vector<Variable>& outputs,
                 bool fuse) {
  FunctionOptions options;
  if (!fuse) options.excluded_rewrites = {"fuse_elementwise"};
  return function(inputs, outputs, {}, options);
}

// Runs both compilations on `values` and compares every output.
void expect_same_outputs(Function& fused, Function& plain, const std::vector<Tensor>& values,
                         double rtol = 1e-5) {
  const std::vector<Tensor> a = fused(values);
  const std::vector<Tensor> b = plain(values);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(testing::all_close(a[i], b[i], rtol, 1e-6)) << "output " << i;
  }
}

TEST(FuseElementwise, TheMainJobsDensityChainBecomesTwoNodes) {
  Variable atoms = tensor(DType::Float32, {8, 12, 3}, "atoms");
  Variable grid = tensor(DType::Float32, {64, 3}, "grid");
  Variable radii = tensor(DType::Float32, {8, 12}, "radii");
  Variable charges = tensor(DType::Float32, {8, 12}, "charges");
  const Variable diff =
      dimshuffle(atoms, {0, kNewAxis, 1, 2}) - dimshuffle(grid, {kNewAxis, 0, kNewAxis, 1});
  const Variable d2 = sum(sqr(diff), {3});
  const Variable scale = dimshuffle(sqr(radii), {0, kNewAxis, 1});
  const Variable density = exp(-d2 / scale) * dimshuffle(charges, {0, kNewAxis, 1});
  const std::vector<Variable> inputs{atoms, grid, radii, charges};
  Function fused = compile(inputs, {density}, true);
  Function plain = compile(inputs, {density}, false);
  const std::map<std::string, int> counts = op_counts(fused);
  EXPECT_EQ(counts.at("Composite"), 2);
  for (const char* gone : {"Sub", "Sum", "Neg", "TrueDiv", "Exp", "Mul"}) {
    EXPECT_FALSE(counts.contains(gone)) << gone;
  }
  EXPECT_EQ(counts.at("Sqr"), 1);  // sqr(radii) alone, before its DimShuffle
  const std::vector<const ApplyNode*> nodes = composites(fused);
  EXPECT_EQ(nodes[0]->op_string(), "Elemwise{Composite{sqr((i0 - i1))},CAReduce{add}{3}}");
  EXPECT_EQ(nodes[1]->op_string(), "Elemwise{Composite{(exp(((-i0) / i1)) * i2)}}");
  expect_same_outputs(fused, plain,
                      {testing::random_tensor(DType::Float32, {8, 12, 3}, 1, 0.0, 4.0),
                       testing::random_tensor(DType::Float32, {64, 3}, 2, 0.0, 4.0),
                       testing::random_tensor(DType::Float32, {8, 12}, 3, 0.5, 1.5),
                       testing::random_tensor(DType::Float32, {8, 12}, 4)});
}

TEST(FuseElementwise, AValueWithTwoReadersIsComputedOnce) {
  Variable x = matrix(DType::Float64, "x");
  const Variable shared = exp(x * 2.0);
  const Variable y = shared * 3.0 + sum(shared, {1}, true);
  Function fused = compile({x}, {y}, true);
  Function plain = compile({x}, {y}, false);
  int exps = 0;
  for (const ApplyNode* node : composites(fused)) {
    exps += node->attrs().get_string("expression").find("Exp") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(exps, 1);
  EXPECT_FALSE(op_counts(fused).contains("Exp"));
  EXPECT_EQ(op_counts(fused).at("Sum"), 1);  // its producer has another reader
  expect_same_outputs(fused, plain, {testing::random_tensor(DType::Float64, {5, 7}, 5)}, 1e-12);
}

// A chain of 200 nodes splits into Composites of at most 64 nodes each, so neither the expression
// nor the recursion that writes and parses it grows with the chain.
TEST(FuseElementwise, LongChainsSplitIntoBoundedGroups) {
  Variable x = vector(DType::Float64, "x");
  Variable y = x;
  for (int i = 0; i < 200; ++i) y = (i % 2 == 0) ? tanh(y) : y * 0.5;
  Function fused = compile({x}, {y}, true);
  Function plain = compile({x}, {y}, false);
  const std::vector<const ApplyNode*> nodes = composites(fused);
  EXPECT_EQ(nodes.size(), 4u);  // 64 + 64 + 64 + 8
  EXPECT_EQ(fused.graph().node_count(), 4u);
  expect_same_outputs(fused, plain, {testing::random_tensor(DType::Float64, {9}, 3)}, 1e-12);
}

TEST(FuseElementwise, AValueReadTwiceInsideAGroupBecomesAStatement) {
  Variable x = vector(DType::Float32, "x");
  const Variable e = exp(x);
  const Variable y = e * (e + 1.0);
  Function fused = compile({x}, {y}, true);
  Function plain = compile({x}, {y}, false);
  const std::vector<const ApplyNode*> nodes = composites(fused);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0]->attrs().get_string("expression"), "Exp(i0);Mul(t0,Add(t0,i1))");
  expect_same_outputs(fused, plain, {testing::random_tensor(DType::Float32, {9}, 6)});
}

TEST(FuseElementwise, GraphOutputsInsideAChainStayOutputs) {
  Variable x = matrix(DType::Float32, "x");
  const Variable a = tanh(x * 0.5);
  const Variable b = a * 2.0 + 1.0;
  Function fused = compile({x}, {a, b}, true);
  Function plain = compile({x}, {a, b}, false);
  EXPECT_EQ(op_counts(fused).at("Composite"), 2);
  const std::vector<Variable>& outputs = fused.graph().outputs();
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].owner()->op().name, "Composite");
  expect_same_outputs(fused, plain, {testing::random_tensor(DType::Float32, {4, 6}, 7)});
}

TEST(FuseElementwise, LeavesLoneNodesAndNonFloatOps) {
  Variable x = matrix(DType::Float32, "x");
  Variable n = matrix(DType::Int64, "n");
  const Variable lone = exp(x);
  const Variable masked = x * cast(ge(x, 0.0), DType::Float32);  // ge and cast are boundaries
  const Variable integers = (n + 1) * n;
  Function fused = compile({x, n}, {lone, masked, integers}, true);
  EXPECT_FALSE(op_counts(fused).contains("Composite"));
}

TEST(FuseElementwise, MaxOverAGroupBecomesOneNode) {
  Variable x = tensor3(DType::Float64, "x");
  Variable b = vector(DType::Float64, "b");
  const Variable y = max(abs(x - b) * 2.0, {0, 2});
  Function fused = compile({x, b}, {y}, true);
  Function plain = compile({x, b}, {y}, false);
  EXPECT_EQ(op_counts(fused), (std::map<std::string, int>{{"Composite", 1}}));
  EXPECT_EQ(composites(fused)[0]->attrs().get_string("reduce"), "maximum");
  expect_same_outputs(fused, plain,
                      {testing::random_tensor(DType::Float64, {3, 4, 5}, 8),
                       testing::random_tensor(DType::Float64, {5}, 9)},
                      1e-12);
}

// The site of the node it replaces, and the user op of every node it computes (that one first).
TEST(FuseElementwise, KeepsTheProvenanceOfTheNodeItReplaces) {
  Variable x = matrix(DType::Float32, "x");
  const int line = __LINE__ + 1;
  const Variable y = sqrt(x * x + 1.0);
  Function fused = compile({x}, {y}, true);
  const std::vector<const ApplyNode*> nodes = composites(fused);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0]->provenance().site.line, static_cast<std::uint32_t>(line));
  EXPECT_EQ(nodes[0]->provenance().user_op, "Sqrt + Add + Mul");
}

TEST(FuseElementwise, GradientGraphsFuseAndGiveTheSameGradients) {
  Variable x = matrix(DType::Float64, "x");
  Variable w = vector(DType::Float64, "w");
  const Variable cost = sum(exp(-sqr(x - w)) * w + softplus(x * w));
  const std::vector<Variable> grads = grad(cost, {x, w});
  const std::vector<Variable> outputs{cost, grads[0], grads[1]};
  Function fused = compile({x, w}, outputs, true);
  Function plain = compile({x, w}, outputs, false);
  EXPECT_LT(fused.graph().node_count(), plain.graph().node_count());
  EXPECT_GE(op_counts(fused).at("Composite"), 2);
  expect_same_outputs(fused, plain,
                      {testing::random_tensor(DType::Float64, {6, 5}, 10),
                       testing::random_tensor(DType::Float64, {5}, 11)},
                      1e-12);
}

TEST(FuseElementwise, CanBeExcludedByName) {
  Variable x = matrix(DType::Float32, "x");
  Function f = compile({x}, {exp(x) * 2.0}, false);
  EXPECT_FALSE(op_counts(f).contains("Composite"));
  EXPECT_TRUE(op_counts(f).contains("Exp"));
}

}  // namespace
}  // namespace tscope
