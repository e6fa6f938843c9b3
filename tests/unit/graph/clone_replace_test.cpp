// SPDX-License-Identifier: Apache-2.0
// clone_replace (Theano's givens): rebuilt nodes keep op, attributes and provenance, untouched
// nodes are shared, the original graph is unchanged, and mistakes are errors naming the Variable.
#include <cmath>

#include "support/test_util.h"
#include "tscope/graph/clone_replace.h"
#include "tscope/tscope.h"

namespace tscope {
namespace {
using testing::error_of;

TEST(CloneReplace, RebuildsOnlyNodesThatDependOnAReplacedVariable) {
  Variable x = vector(DType::Float64, "x");
  Variable z = vector(DType::Float64, "z");
  Variable e = exp(z);
  Variable y = x * 2.0 + e;
  Variable one = ones_like(z);
  const std::vector<Variable> rebuilt = clone_replace({y, e}, {{x, one}});
  ASSERT_EQ(rebuilt.size(), 2u);
  EXPECT_FALSE(rebuilt[0] == y);
  EXPECT_TRUE(rebuilt[1] == e);  // exp(z) does not depend on x: shared
  EXPECT_EQ(rebuilt[0].owner()->provenance().site.line, y.owner()->provenance().site.line);
  EXPECT_EQ(rebuilt[0].owner()->op_string(), y.owner()->op_string());

  // The rebuilt graph no longer needs x: ones_like(z) * 2 + exp(z).
  const Tensor values = Tensor::from_vector<double>({2}, {0.0, 1.0});
  const Tensor result = function({z}, {rebuilt[0]})({values})[0];
  EXPECT_DOUBLE_EQ(result.at(0), 3.0);
  EXPECT_NEAR(result.at(1), 2.0 + std::exp(1.0), 1e-12);
}

TEST(CloneReplace, OriginalGraphStillComputesTheOriginal) {
  Variable x = vector(DType::Float64, "x");
  Variable y = sqr(x);
  const std::vector<Variable> rebuilt = clone_replace({y}, {{x, x + 1.0}});
  const Tensor three = Tensor::from_vector<double>({1}, {3.0});
  const std::vector<Tensor> results = function({x}, {y, rebuilt[0]})({three});
  EXPECT_EQ(results[0].at(0), 9.0);
  EXPECT_EQ(results[1].at(0), 16.0);
}

TEST(CloneReplace, ReplacingAnOutputItselfAndNoReplacements) {
  Variable x = vector(DType::Float64, "x");
  Variable w = vector(DType::Float64, "w");
  EXPECT_TRUE(clone_replace({x}, {{x, w}})[0] == w);
  Variable y = exp(x);
  EXPECT_TRUE(clone_replace({y}, {})[0] == y);
}

TEST(CloneReplace, DeepChainDoesNotExhaustTheStack) {
  Variable x = scalar(DType::Float64, "x");
  Variable y = x;
  for (int i = 0; i < 20000; ++i) y = y + 1.0;
  Variable w = scalar(DType::Float64, "w");
  const std::vector<Variable> rebuilt = clone_replace({y}, {{x, w}});
  EXPECT_FALSE(rebuilt[0] == y);
}

TEST(CloneReplace, ErrorsNameTheVariable) {
  Variable x = vector(DType::Float64, "x");
  Variable stray = vector(DType::Float64, "stray");
  Variable y = exp(x);
  const Error missing = error_of([&] { (void)clone_replace({y}, {{stray, x}}); });
  EXPECT_EQ(missing.kind(), ErrorKind::InvalidArgument);
  EXPECT_NE(missing.message().find("'stray'"), std::string::npos);
  const Error mismatch =
      error_of([&] { (void)clone_replace({y}, {{x, vector(DType::Float32, "f")}}); });
  EXPECT_EQ(mismatch.kind(), ErrorKind::TypeMismatch);
  const Error rank = error_of([&] { (void)clone_replace({y}, {{x, matrix(DType::Float64)}}); });
  EXPECT_EQ(rank.kind(), ErrorKind::TypeMismatch);
}

}  // namespace
}  // namespace tscope
