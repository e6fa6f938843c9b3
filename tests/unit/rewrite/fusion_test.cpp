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

// In-place writes are left out: they rename nodes this file names (inplace_test.cpp covers them).
Function compile(const std::vector<Variable>& inputs, const std::vector<Variable>& outputs,
                 bool fuse) {
  FunctionOptions options;
  options.excluded_rewrites = {fuse ? "use_inplace" : "fuse_elementwise"};
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

// The main job's density grid (src/models/voxel_cnn_training.cpp) over 64 grid points: the
// squared distances of 12 atoms to each point, and their Gaussian.
struct DensityGrid {
  Variable atoms = tensor(DType::Float32, {8, 12, 3}, "atoms");
  Variable grid = tensor(DType::Float32, {64, 3}, "grid");
  Variable radii = tensor(DType::Float32, {8, 12}, "radii");
  Variable charges = tensor(DType::Float32, {8, 12}, "charges");
  Variable d2 = sum(sqr(dimshuffle(atoms, {0, kNewAxis, 1, 2}) -
                        dimshuffle(grid, {kNewAxis, 0, kNewAxis, 1})),
                    {3});
  Variable gauss = exp(-d2 / dimshuffle(sqr(radii), {0, kNewAxis, 1}));

  [[nodiscard]] std::vector<Variable> inputs() const { return {atoms, grid, radii, charges}; }
  [[nodiscard]] static std::vector<Tensor> values() {
    return {testing::random_tensor(DType::Float32, {8, 12, 3}, 1, 0.0, 4.0),
            testing::random_tensor(DType::Float32, {64, 3}, 2, 0.0, 4.0),
            testing::random_tensor(DType::Float32, {8, 12}, 3, 0.5, 1.5),
            testing::random_tensor(DType::Float32, {8, 12}, 4)};
  }
};

TEST(FuseElementwise, TheMainJobsDensityChainBecomesTwoNodes) {
  const DensityGrid g;
  const Variable density = g.gauss * dimshuffle(g.charges, {0, kNewAxis, 1});
  Function fused = compile(g.inputs(), {density}, true);
  Function plain = compile(g.inputs(), {density}, false);
  const std::map<std::string, int> counts = op_counts(fused);
  EXPECT_EQ(counts.at("Composite"), 2);
  for (const char* gone : {"Sub", "Sum", "Neg", "TrueDiv", "Exp", "Mul"}) {
    EXPECT_FALSE(counts.contains(gone)) << gone;
  }
  EXPECT_EQ(counts.at("Sqr"), 1);  // sqr(radii) alone, before its DimShuffle
  const std::vector<const ApplyNode*> nodes = composites(fused);
  EXPECT_EQ(nodes[0]->op_string(), "Elemwise{Composite{sqr((i0 - i1))},CAReduce{add}{3}}");
  EXPECT_EQ(nodes[1]->op_string(), "Elemwise{Composite{(exp(((-i0) / i1)) * i2)}}");
  expect_same_outputs(fused, plain, DensityGrid::values());
}

// The whole density grid of the main job (src/models/voxel_cnn_training.cpp): the squared
// distances in one node, and the Gaussian with both of its sums over atoms in another, with two
// outputs, so the (N, P, A) Gaussian is computed once and never stored.
TEST(FuseElementwise, TheMainJobsDensityGridBecomesTwoNodes) {
  const DensityGrid g;
  const Variable occupancy = sum(g.gauss, {2});
  const Variable charge = sum(g.gauss * dimshuffle(g.charges, {0, kNewAxis, 1}), {2});
  const Variable grid_values = occupancy * 2.0 + charge;
  Function fused = compile(g.inputs(), {grid_values}, true);
  Function plain = compile(g.inputs(), {grid_values}, false);
  const std::vector<const ApplyNode*> nodes = composites(fused);
  ASSERT_EQ(nodes.size(), 3u);  // the distances, the Gaussian's sums, the final 2 * o + c
  EXPECT_EQ(nodes[1]->num_outputs(), 2);
  const std::string& expression = nodes[1]->attrs().get_string("expression");
  EXPECT_EQ(expression.find("Exp"), expression.rfind("Exp")) << expression;  // one exp per element
  EXPECT_NE(nodes[1]->op_string().find(",CAReduce{add}{2}}"), std::string::npos);
  const std::map<std::string, int> counts = op_counts(fused);
  for (const char* gone : {"Sum", "Exp", "Neg", "TrueDiv", "Mul"}) {
    EXPECT_FALSE(counts.contains(gone)) << gone;
  }
  expect_same_outputs(fused, plain, DensityGrid::values());
}

// Layer-norm style: the second sum reads x - mean, which needs the first sum's result, so the
// two cannot be one node (it would read its own output); each still fuses on its own.
TEST(FuseElementwise, SiblingSumsThatNeedEachOthersResultStaySeparate) {
  Variable a = matrix(DType::Float64, "a");
  const Variable x = exp(a * 0.5);
  const Variable mean = dimshuffle(sum(x, {1}) / 7.0, {0, kNewAxis});
  const Variable variance = sum(sqr(x - mean), {1});
  Function fused = compile({a}, {variance}, true);
  Function plain = compile({a}, {variance}, false);
  for (const ApplyNode* node : composites(fused)) EXPECT_EQ(node->num_outputs(), 1);
  expect_same_outputs(fused, plain, {testing::random_tensor(DType::Float64, {5, 7}, 12)}, 1e-12);
}

TEST(FuseElementwise, SiblingsOverOtherAxesOrOfAnotherKindAreNotMerged) {
  Variable a = matrix(DType::Float32, "a");
  Variable w = vector(DType::Float32, "w");
  const Variable e = exp(a * 0.5);
  const Variable rows = sum(e * w, {1});
  const Variable columns = sum(e, {0});
  const Variable peaks = max(e * 2.0, {1});
  Function fused = compile({a, w}, {rows, columns, peaks}, true);
  Function plain = compile({a, w}, {rows, columns, peaks}, false);
  for (const ApplyNode* node : composites(fused)) EXPECT_EQ(node->num_outputs(), 1);
  int exps = 0;
  for (const ApplyNode* node : composites(fused)) {
    exps += node->attrs().get_string("expression").find("Exp") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(exps + op_counts(fused).count("Exp"), 1);  // computed once, read by three groups
  expect_same_outputs(fused, plain,
                      {testing::random_tensor(DType::Float32, {5, 7}, 13),
                       testing::random_tensor(DType::Float32, {7}, 14)});
}

TEST(FuseElementwise, SiblingMaximaShareOnePass) {
  Variable a = matrix(DType::Float64, "a");
  const Variable e = tanh(a) * 3.0;
  const Variable high = max(e, {1});
  const Variable scaled = max(e * e, {1});
  Function fused = compile({a}, {high, scaled}, true);
  Function plain = compile({a}, {high, scaled}, false);
  EXPECT_EQ(op_counts(fused), (std::map<std::string, int>{{"Composite", 1}}));
  EXPECT_EQ(composites(fused)[0]->num_outputs(), 2);
  expect_same_outputs(fused, plain, {testing::random_tensor(DType::Float64, {6, 9}, 15)}, 1e-12);
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

// Each square reads the previous value twice: expanded in the printed name the expression would
// double per step, so a long one is printed as statements and compiling stays fast.
TEST(FuseElementwise, RepeatedSquaringPrintsInBoundedSpace) {
  Variable x = vector(DType::Float64, "x");
  Variable y = x;
  for (int i = 0; i < 40; ++i) y = y * y;
  Function fused = compile({x}, {y}, true);
  Function plain = compile({x}, {y}, false);
  const std::vector<const ApplyNode*> nodes = composites(fused);
  ASSERT_EQ(nodes.size(), 1u);
  const std::string name = nodes[0]->op_string();
  EXPECT_LT(name.size(), 2000u) << name;
  EXPECT_NE(name.find("t39=(t38 * t38); t39"), std::string::npos) << name;
  expect_same_outputs(fused, plain,
                      {testing::random_tensor(DType::Float64, {7}, 20, 1.0 - 1e-13, 1.0)},
                      1e-9);
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
  Variable b = matrix(DType::Bool, "b");
  const Variable lone = exp(x);
  const Variable integers = (n + 1) * n;
  const Variable of_input = x * cast(b, DType::Float32);  // the bool comes from outside
  Function fused = compile({x, n, b}, {lone, integers, of_input}, true);
  EXPECT_FALSE(op_counts(fused).contains("Composite"));
}

// A ReLU gradient's mask, g * cast(x >= 0): the comparison's 1 or 0 stays inside the group.
TEST(FuseElementwise, ComparisonsAndTheirCastsFuseIntoTheirReader) {
  Variable x = matrix(DType::Float32, "x");
  Variable g = matrix(DType::Float32, "g");
  const Variable masked = g * cast(ge(x, 0.0), DType::Float32);
  const Variable shown = ge(x, 1.0);  // a bool output: its comparison stays a node
  const Variable masked_by_shown = g * cast(shown, DType::Float32);
  Function fused = compile({x, g}, {masked, shown, masked_by_shown}, true);
  Function plain = compile({x, g}, {masked, shown, masked_by_shown}, false);
  const std::vector<const ApplyNode*> nodes = composites(fused);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0]->op_string(), "Elemwise{Composite{(i2 * cast(ge(i0, i1)))}}");
  const std::map<std::string, int> counts = op_counts(fused);
  EXPECT_EQ(counts.at("GE"), 1);
  EXPECT_EQ(counts.at("Cast"), 1);
  Tensor x_values = testing::random_tensor(DType::Float32, {6, 9}, 16);
  std::vector<double> with_ties = x_values.to_doubles();
  with_ties[0] = 0.0;  // x >= 0 holds at 0
  with_ties[1] = 1.0;
  expect_same_outputs(fused, plain,
                      {Tensor::from_doubles(DType::Float32, {6, 9}, with_ties),
                       testing::random_tensor(DType::Float32, {6, 9}, 17)});
}

TEST(FuseElementwise, ReluGradientsFuse) {
  Variable x = matrix(DType::Float64, "x");
  Variable w = matrix(DType::Float64, "w");
  const Variable cost = sum(sqr(maximum(dot(x, w), 0.0) - 1.0));
  const Variable gw = grad(cost, {w})[0];
  Function fused = compile({x, w}, {gw}, true);
  Function plain = compile({x, w}, {gw}, false);
  const std::map<std::string, int> counts = op_counts(fused);
  EXPECT_FALSE(counts.contains("GE"));
  EXPECT_FALSE(counts.contains("Cast"));
  expect_same_outputs(fused, plain,
                      {testing::random_tensor(DType::Float64, {5, 4}, 18),
                       testing::random_tensor(DType::Float64, {4, 3}, 19)},
                      1e-12);
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
