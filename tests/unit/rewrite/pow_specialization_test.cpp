// SPDX-License-Identifier: Apache-2.0
// specialize_pow: a power with a scalar constant exponent of 2, 0.5, -1 or -0.5 becomes sqr,
// sqrt, reciprocal or reciprocal(sqrt) with the same values; any other power is left.
#include <map>
#include <string>

#include "support/graph_counts.h"
#include "support/test_util.h"

namespace tscope {
namespace {
using testing::op_counts;

Function compile(const std::vector<Variable>& inputs, const Variable& y, bool specialize) {
  FunctionOptions options;
  // Fusion would hide the ops in a Composite: these tests are about which op computes y.
  options.excluded_rewrites = {"fuse_elementwise"};
  if (!specialize) options.excluded_rewrites.push_back("specialize_pow");
  return function(inputs, {y}, {}, options);
}

void expect_specialized(double exponent, const std::map<std::string, int>& ops) {
  SCOPED_TRACE(exponent);
  Variable x = matrix(DType::Float32, "x");
  const int pow_line = __LINE__ + 1;
  const Variable y = pow(x, exponent);
  Function specialized = compile({x}, y, true);
  Function plain = compile({x}, y, false);
  EXPECT_EQ(op_counts(specialized), ops);
  EXPECT_EQ(op_counts(plain), (std::map<std::string, int>{{"Pow", 1}}));
  for (const ApplyNode* node : specialized.graph().toposort()) {
    EXPECT_EQ(node->provenance().site.line, static_cast<std::uint32_t>(pow_line));
  }
  // Positive values, so that every exponent is defined.
  const Tensor values = testing::random_tensor(DType::Float32, {7, 33}, 1, 0.1, 4.0);
  EXPECT_TRUE(testing::all_close(specialized({values})[0], plain({values})[0], 1e-6, 0));
}

TEST(SpecializePow, ConstantExponentsBecomeTheirOps) {
  expect_specialized(2.0, {{"Sqr", 1}});
  expect_specialized(0.5, {{"Sqrt", 1}});
  expect_specialized(-1.0, {{"Reciprocal", 1}});
  expect_specialized(-0.5, {{"Reciprocal", 1}, {"Sqrt", 1}});
}

TEST(SpecializePow, OtherPowersStay) {
  Variable x = matrix(DType::Float32, "x");
  Variable e = matrix(DType::Float32, "e");
  Variable i = matrix(DType::Int32, "i");
  const std::map<std::string, int> one_pow{{"Pow", 1}};
  EXPECT_EQ(op_counts(compile({x}, pow(x, 3.0), true)), one_pow);
  EXPECT_EQ(op_counts(compile({x, e}, pow(x, e), true)), one_pow);
  // An exponent with more axes than x changes the result's rank.
  const Variable wide = constant(Tensor::from_doubles(DType::Float32, {1, 1, 1}, {2.0}));
  EXPECT_EQ(op_counts(compile({x}, pow(x, wide), true)), one_pow);
  // An integer base to a float power promotes to float: sqr would keep the integer type.
  EXPECT_EQ(op_counts(compile({i}, pow(i, 2.0), true))["Sqr"], 0);
}

}  // namespace
}  // namespace tscope
