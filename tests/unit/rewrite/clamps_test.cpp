// SPDX-License-Identifier: Apache-2.0
// fuse_clamps: minimum(maximum(x, low), high) with scalar constant bounds becomes one Clip node
// that computes the same values (NaN and infinities included), and everything else is left.
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "support/graph_counts.h"
#include "support/test_util.h"

namespace tscope {
namespace {
using testing::op_counts;

Function compile(const std::vector<Variable>& outputs, const Variable& x, bool fuse) {
  FunctionOptions options;
  // Elementwise fusion would turn the unfused clamp into a Composite: these tests are about Clip.
  options.excluded_rewrites = {"fuse_elementwise"};
  if (!fuse) options.excluded_rewrites.push_back("fuse_clamps");
  return function({x}, outputs, {}, options);
}

// Equal element for element, NaN where the other has NaN.
void expect_same_values(const Tensor& actual, const Tensor& expected) {
  const std::vector<double> a = actual.to_doubles();
  const std::vector<double> e = expected.to_doubles();
  ASSERT_EQ(a.size(), e.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(e[i])) {
      EXPECT_TRUE(std::isnan(a[i])) << i;
    } else {
      EXPECT_EQ(a[i], e[i]) << i;
    }
  }
}

Tensor awkward_values() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  return Tensor::from_doubles(DType::Float32, {2, 4},
                              {std::nan(""), -kInf, kInf, -5.0, -1.0, 0.5, 2.0, 7.0});
}

TEST(FuseClamps, ReluSixBecomesOneClipWithTheSameValues) {
  Variable x = matrix(DType::Float32, "x");
  const int clamp_line = __LINE__ + 1;
  Variable y = minimum(maximum(x, -1.0), 2.0);
  Function fused = compile({y}, x, true);
  Function plain = compile({y}, x, false);
  EXPECT_EQ(op_counts(fused), (std::map<std::string, int>{{"Clip", 1}}));
  EXPECT_EQ(op_counts(plain), (std::map<std::string, int>{{"Maximum", 1}, {"Minimum", 1}}));
  const ApplyNode* clip = fused.graph().toposort().front();
  EXPECT_EQ(clip->provenance().site.line, static_cast<std::uint32_t>(clamp_line));
  expect_same_values(fused({awkward_values()})[0], plain({awkward_values()})[0]);
  // Clip's kernel with its scalar bounds read once (the first operand contiguous, the others
  // single elements) against its reference kernel.
  const Tensor many = testing::random_tensor(DType::Float32, {37, 129}, 3, -4.0, 4.0);
  EXPECT_TRUE(testing::fast_matches_reference({x}, {y}, {many}, 0, 0));
}

TEST(FuseClamps, LeavesOtherShapesOfTheSameOps) {
  Variable x = matrix(DType::Float32, "x");
  const Variable low = constant(Tensor::scalar(-1.0, DType::Float32), "low");
  const Variable high = constant(Tensor::scalar(2.0, DType::Float32), "high");
  const Variable bounds = constant(testing::random_tensor(DType::Float32, {4}, 5), "bounds");
  // Bounds first: the NaN behaviour differs from Clip's.
  Variable swapped = minimum(high, maximum(low, x));
  // The raised value is read twice.
  Variable raised = maximum(x, low);
  Variable shared_raise = minimum(raised, high) + raised;
  // A bound that is not a single element.
  Variable vector_bound = minimum(maximum(x, low), bounds);
  for (const Variable& y : {swapped, shared_raise, vector_bound}) {
    Function f = compile({y}, x, true);
    EXPECT_FALSE(op_counts(f).contains("Clip")) << y.to_string();
    Function plain = compile({y}, x, false);
    expect_same_values(f({awkward_values()})[0], plain({awkward_values()})[0]);
  }
}

TEST(FuseClamps, CanBeExcludedByName) {
  Variable x = matrix(DType::Float32, "x");
  FunctionOptions options;
  options.excluded_rewrites = {"fuse_clamps", "fuse_elementwise"};
  Function f = function({x}, {minimum(maximum(x, 0.0), 6.0)}, {}, options);
  EXPECT_TRUE(op_counts(f).contains("Minimum"));
}

}  // namespace
}  // namespace tscope
