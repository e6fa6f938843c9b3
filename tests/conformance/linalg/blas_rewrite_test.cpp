// SPDX-License-Identifier: Apache-2.0
// The BLAS rewrite rules: Dot -> Dot22 and Dot22 + add -> Gemm, checked on the op names of the
// compiled graph and on values against reference kernels.
#include <algorithm>

#include "support/test_util.h"

namespace tscope {
namespace {

std::vector<std::string> op_names(const Function& f) {
  std::vector<std::string> names;
  for (const ApplyNode* node : f.graph().toposort()) names.emplace_back(node->op().name);
  return names;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(BlasRewrite, DotPlusBiasBecomesGemm) {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Variable x = matrix(dtype, "x");
    Variable w = matrix(dtype, "W");
    Variable b = vector(dtype, "b");
    Variable h = dot(x, w) + b;
    Function f = function({x, w, b}, {h});
    const std::vector<std::string> names = op_names(f);
    EXPECT_TRUE(contains(names, "Gemm"));
    EXPECT_FALSE(contains(names, "Dot"));
    EXPECT_FALSE(contains(names, "Add"));
    const std::vector<Tensor> values = {testing::random_tensor(dtype, {5, 7}, 1),
                                        testing::random_tensor(dtype, {7, 3}, 2),
                                        testing::random_tensor(dtype, {3}, 3)};
    const double tolerance = dtype == DType::Float32 ? 1e-5 : 1e-12;
    EXPECT_TRUE(testing::all_close(f(values)[0],
                                   testing::run_graph({x, w, b}, {h}, values, true)[0], tolerance,
                                   tolerance));
    // The same graph compiled with reference kernels everywhere agrees too.
    EXPECT_TRUE(testing::fast_matches_reference({x, w, b}, {h}, values, tolerance, tolerance));
  }
}

TEST(BlasRewrite, BiasOnTheLeftAndFullMatrixTermAlsoFuse) {
  Variable x = matrix(DType::Float64, "x");
  Variable w = matrix(DType::Float64, "W");
  Variable z = matrix(DType::Float64, "z");
  Function f = function({x, w, z}, {z + dot(x, w)});
  EXPECT_TRUE(contains(op_names(f), "Gemm"));
  const std::vector<Tensor> values = {testing::random_tensor(DType::Float64, {4, 2}, 1),
                                      testing::random_tensor(DType::Float64, {2, 6}, 2),
                                      testing::random_tensor(DType::Float64, {4, 6}, 3)};
  EXPECT_TRUE(testing::fast_matches_reference({x, w, z}, {z + dot(x, w)}, values, 1e-12, 1e-12));
}

TEST(BlasRewrite, GemmKeepsTheAddsProvenance) {
  Variable x = matrix(DType::Float32, "x");
  Variable w = matrix(DType::Float32, "W");
  Variable b = vector(DType::Float32, "b");
  Variable h = dot(x, w) + b;
  const Provenance expected = h.owner()->provenance();
  Function f = function({x, w, b}, {h});
  for (const ApplyNode* node : f.graph().toposort()) {
    if (node->op().name != "Gemm") continue;
    EXPECT_EQ(node->provenance().site.line, expected.site.line);
    EXPECT_EQ(node->provenance().user_op, expected.user_op);
    return;
  }
  FAIL() << "no Gemm in the compiled graph";
}

TEST(BlasRewrite, SharedProductStaysDot22) {
  Variable x = matrix(DType::Float32, "x");
  Variable w = matrix(DType::Float32, "W");
  Variable b = vector(DType::Float32, "b");
  Variable product = dot(x, w);
  Function f = function({x, w, b}, {product + b, product});
  const std::vector<std::string> names = op_names(f);
  EXPECT_TRUE(contains(names, "Dot22"));
  EXPECT_TRUE(contains(names, "Add"));
  EXPECT_FALSE(contains(names, "Gemm"));
}

TEST(BlasRewrite, VectorsIntegersAndMixedDtypesStayDot) {
  Variable v = vector(DType::Float32, "v");
  Variable m = matrix(DType::Float32, "m");
  Variable i = matrix(DType::Int32, "i");
  Variable d = matrix(DType::Float64, "d");
  EXPECT_EQ(op_names(function({v, m}, {dot(m, v)})), std::vector<std::string>{"Dot"});
  EXPECT_EQ(op_names(function({i}, {dot(i, i)})), std::vector<std::string>{"Dot"});
  EXPECT_FALSE(contains(op_names(function({m, d}, {dot(m, d)})), "Dot22"));
}

TEST(BlasRewrite, AddThatBroadcastsTheProductIsNotFused) {
  Variable x = matrix(DType::Float32, "x", {kUnknownDim, 4});
  Variable w = matrix(DType::Float32, "W", {4, 1});
  Variable b = vector(DType::Float32, "b", {6});
  Variable h = dot(x, w) + b;  // (n, 1) + (6,) -> (n, 6): not a Gemm shape
  Function f = function({x, w, b}, {h});
  const std::vector<std::string> names = op_names(f);
  EXPECT_TRUE(contains(names, "Dot22"));
  EXPECT_FALSE(contains(names, "Gemm"));
  const std::vector<Tensor> values = {testing::random_tensor(DType::Float32, {3, 4}, 1),
                                      testing::random_tensor(DType::Float32, {4, 1}, 2),
                                      testing::random_tensor(DType::Float32, {6}, 3)};
  EXPECT_TRUE(testing::fast_matches_reference({x, w, b}, {h}, values, 1e-5, 1e-5));
}

TEST(BlasRewrite, GradientsThroughTheRewrittenGraphMatchFiniteDifferences) {
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return dot(v[0], v[1]) + v[2]; },
      {testing::random_tensor(DType::Float64, {3, 4}, 1), testing::random_tensor(DType::Float64, {4, 2}, 2),
       testing::random_tensor(DType::Float64, {2}, 3)}));
}

}  // namespace
}  // namespace tscope
