// SPDX-License-Identifier: Apache-2.0
// apply_to_fixed_point: rules see only the ops they track, nodes a rule creates are visited too,
// the reports count what each rule tried, changed, created and removed, and two rules undoing each
// other end in a clear Internal error instead of a hang.
#include "support/test_util.h"
#include "tscope/ops/registry.h"
#include "tscope/rewrite/pattern.h"
#include "tscope/rewrite/rule.h"

namespace tscope {
namespace {
using rewrite::LocalRule;
using rewrite::Replacements;
using rewrite::RuleReport;

// neg(neg(x)) -> x
Replacements cancel_double_negation(const FunctionGraph&, ApplyNode& node) {
  const ApplyNode* inner = rewrite::producer_of(node.input(0), op_def("Neg"));
  if (inner == nullptr) return {};
  return {inner->input(0)};
}

// a - b -> a + neg(b)
Replacements sub_to_add_neg(const FunctionGraph&, ApplyNode& node) {
  return {node.input(0) + neg(node.input(1))};
}

// sqr(x) -> x * x, and x * x -> sqr(x): each undoes the other.
Replacements sqr_to_mul(const FunctionGraph&, ApplyNode& node) {
  return {node.input(0) * node.input(0)};
}
Replacements mul_to_sqr(const FunctionGraph&, ApplyNode& node) {
  if (!(node.input(0) == node.input(1))) return {};
  return {sqr(node.input(0))};
}

std::vector<std::string> op_names(const FunctionGraph& graph) {
  std::vector<std::string> names;
  for (const ApplyNode* node : graph.toposort()) names.emplace_back(node->op().name);
  return names;
}

TEST(FixedPoint, RulesRunUntilNothingChanges) {
  Variable x = vector(DType::Float32, "x");
  Variable y = x;
  for (int i = 0; i < 6; ++i) y = neg(y);
  FunctionGraph graph = FunctionGraph::clone_of({x}, {exp(y)});
  FakeClock clock(10);
  std::vector<RuleReport> reports;
  const LocalRule rule{"cancel_double_negation", {&op_def("Neg")}, cancel_double_negation};
  rewrite::apply_to_fixed_point(graph, {&rule, 1}, clock, reports);
  EXPECT_EQ(op_names(graph), std::vector<std::string>{"Exp"});
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].name, "cancel_double_negation");
  EXPECT_EQ(reports[0].changes, 3);
  EXPECT_EQ(reports[0].nodes_removed, 6);
  EXPECT_EQ(reports[0].nodes_created, 0);
  // Only Neg nodes are tried (never the Exp), each at most once.
  EXPECT_LE(reports[0].attempts, 6);
  EXPECT_EQ(reports[0].duration_ns, 10 * reports[0].attempts);
  EXPECT_NO_THROW(graph.check_index());
}

TEST(FixedPoint, NodesARuleCreatesAreVisited) {
  Variable a = vector(DType::Float32, "a");
  Variable b = vector(DType::Float32, "b");
  FunctionGraph graph = FunctionGraph::clone_of({a, b}, {a - neg(b)});
  FakeClock clock(1);
  std::vector<RuleReport> reports;
  const std::vector<LocalRule> rules = {
      {"sub_to_add_neg", {&op_def("Sub")}, sub_to_add_neg},
      {"cancel_double_negation", {&op_def("Neg")}, cancel_double_negation}};
  rewrite::apply_to_fixed_point(graph, rules, clock, reports);
  // a - neg(b) -> a + neg(neg(b)) -> a + b: the new Neg was visited after it joined.
  EXPECT_EQ(op_names(graph), std::vector<std::string>{"Add"});
  EXPECT_EQ(graph.toposort()[0]->input(1), graph.inputs()[1]);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].changes, 1);
  EXPECT_EQ(reports[0].nodes_created, 2);  // the add and the new neg
  EXPECT_EQ(reports[1].changes, 1);
  EXPECT_EQ(reports[1].nodes_removed, 2);  // both negations
  EXPECT_NO_THROW(graph.check_index());
}

TEST(FixedPoint, RulesUndoingEachOtherAreAnInternalError) {
  Variable x = vector(DType::Float32, "x");
  FunctionGraph graph = FunctionGraph::clone_of({x}, {exp(sqr(x))});
  FakeClock clock(1);
  std::vector<RuleReport> reports;
  const std::vector<LocalRule> rules = {{"sqr_to_mul", {&op_def("Sqr")}, sqr_to_mul},
                                        {"mul_to_sqr", {&op_def("Mul")}, mul_to_sqr}};
  const Error error = testing::error_of(
      [&] { rewrite::apply_to_fixed_point(graph, rules, clock, reports); });
  EXPECT_EQ(error.kind(), ErrorKind::Internal);
  EXPECT_TRUE(testing::contains(error, "did not reach a fixed point")) << error.what();
}

TEST(FixedPoint, PatternHelpersReadTheIndex) {
  Variable x = vector(DType::Float32, "x");
  Variable e = exp(x);
  FunctionGraph graph = FunctionGraph::clone_of({x}, {e * 2.0, neg(e), tanh(x)});
  const std::vector<ApplyNode*> order = graph.toposort();
  const Variable gexp = order[0]->output(0);
  EXPECT_EQ(rewrite::producer_of(gexp, op_def("Exp")), order[0]);
  EXPECT_EQ(rewrite::producer_of(gexp, op_def("Log")), nullptr);
  EXPECT_EQ(rewrite::producer_of(graph.inputs()[0], op_def("Exp")), nullptr);
  EXPECT_FALSE(rewrite::read_once(graph, gexp));  // the product and the negation
  EXPECT_FALSE(rewrite::read_once(graph, graph.outputs()[2]));  // an output, read by no node
  EXPECT_FALSE(rewrite::read_once(graph, graph.inputs()[0]));  // the exp and the tanh
  EXPECT_TRUE(rewrite::is_scalar_constant(order[1]->input(1)));
}

}  // namespace
}  // namespace tscope
