// SPDX-License-Identifier: Apache-2.0
// fusion_role against fuse_elementwise itself: the nodes it calls steps or reductions of a fused
// loop are fused when nothing else stops them, and those it calls "none" stay nodes of their own.
#include "tscope/rewrite/fusion_role.h"

#include <string>

#include "support/graph_counts.h"
#include "support/test_util.h"
#include "tscope/ops/registry.h"

namespace tscope {
namespace {

using rewrite::fusion_role;
using testing::op_counts;

Function compile(const std::vector<Variable>& inputs,
                 const std::vector<Variable>& outputs,
                 bool fuse) {
  FunctionOptions options;
  if (!fuse) options.excluded_rewrites = {"fuse_elementwise"};
  return function(inputs, outputs, {}, options);
}

std::string role_of(const Function& f, std::string_view op) {
  for (const ApplyNode* node : f.graph().toposort()) {
    if (node->op().name == op) return std::string(fusion_role(*node));
  }
  ADD_FAILURE() << "no " << op << " node";
  return {};
}

TEST(FusionRole, FloatElementwiseOpsAreStepsThatFuse) {
  Variable x = matrix(DType::Float32, "x");
  const Variable y = tanh(x * 2.0);
  const Function plain = compile({x}, {y}, false);
  EXPECT_EQ(role_of(plain, "Mul"), "elementwise");
  EXPECT_EQ(role_of(plain, "Tanh"), "elementwise");
  const Function fused = compile({x}, {y}, true);
  EXPECT_EQ(op_counts(fused), (std::map<std::string, int>{{"Composite", 1}}));
  EXPECT_EQ(role_of(fused, "Composite"), "elementwise");
}

TEST(FusionRole, SumAndMaxEndALoop) {
  Variable x = matrix(DType::Float64, "x");
  for (const bool maximum : {false, true}) {
    const Variable y = maximum ? max(exp(x), {1}) : sum(exp(x), {1});
    const std::string_view op = maximum ? "Max" : "Sum";
    EXPECT_EQ(role_of(compile({x}, {y}, false), op), "reduction") << op;
    const Function fused = compile({x}, {y}, true);
    EXPECT_EQ(op_counts(fused), (std::map<std::string, int>{{"Composite", 1}})) << op;
    EXPECT_EQ(role_of(fused, "Composite"), "reduction") << op;
  }
}

// A comparison and a Cast of its bool to a float are steps (a ReLU gradient's mask); integer
// arithmetic and products are not.
TEST(FusionRole, ComparisonsAndTheirCastsAreStepsOtherOpsAreNone) {
  Variable x = matrix(DType::Float32, "x");
  Variable w = matrix(DType::Float32, "w");
  Variable n = matrix(DType::Int64, "n");
  const Variable y = cast(ge(x, 0.0), DType::Float32) * dot(x, w);
  const Variable integers = (n + 1) * n;
  const Function plain = compile({x, w, n}, {y, integers}, false);
  for (const char* op : {"GE", "Cast"}) EXPECT_EQ(role_of(plain, op), "elementwise") << op;
  EXPECT_EQ(role_of(plain, "Add"), "none");
  const Function fused = compile({x, w, n}, {y, integers}, true);
  for (const char* op : {"GE", "Cast"}) EXPECT_FALSE(op_counts(fused).contains(op)) << op;
  EXPECT_EQ(role_of(fused, "Dot22"), "none");
  EXPECT_EQ(op_counts(fused).at("Add"), 1);
}

// use_inplace marks a node after fusion ran, so the mark says nothing about what fusion saw.
TEST(FusionRole, AnInplaceMarkKeepsAStep) {
  Variable x = vector(DType::Float32, "x");
  const auto node =
      ApplyNode::create(op_def("Exp"), {x}, Attrs{{"inplace", std::int64_t{0}}}, Provenance{});
  EXPECT_EQ(fusion_role(*node), "elementwise");
}

}  // namespace
}  // namespace tscope
