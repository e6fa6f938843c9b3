// SPDX-License-Identifier: Apache-2.0
// The BLAS rewrite rules: Dot -> Dot22 and Dot22 plus or minus a scaled term -> Gemm, checked on
// the op names of the compiled graph and on values against reference kernels.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

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

// The Gemm points at the product's line (most of its work) and names both user ops.
TEST(BlasRewrite, GemmNamesTheProductAndTheAdd) {
  Variable x = matrix(DType::Float32, "x");
  Variable w = matrix(DType::Float32, "W");
  Variable b = vector(DType::Float32, "b");
  Variable product = dot(x, w);
  Variable h = product + b;
  const Provenance from_product = product.owner()->provenance();
  const Provenance from_add = h.owner()->provenance();
  ASSERT_NE(from_product.site.line, from_add.site.line);
  Function f = function({x, w, b}, {h});
  for (const ApplyNode* node : f.graph().toposort()) {
    if (node->op().name != "Gemm") continue;
    EXPECT_EQ(node->provenance().site.line, from_product.site.line);
    EXPECT_EQ(node->provenance().user_op, from_product.user_op + " + " + from_add.user_op);
    return;
  }
  FAIL() << "no Gemm in the compiled graph";
}

// The only Gemm node of `f`, or null.
const ApplyNode* only_gemm(const Function& f) {
  const ApplyNode* found = nullptr;
  for (const ApplyNode* node : f.graph().toposort()) {
    if (node->op().name != "Gemm") continue;
    if (found != nullptr) return nullptr;
    found = node;
  }
  return found;
}

// Sums and differences of a product and a term, each side possibly scaled by a constant (SGD's
// momentum update of a weight gradient among them), become one Gemm with the factors and the
// sign as alpha and beta, and compute what the elementwise form computes.
TEST(BlasRewrite, ScaledSumsAndDifferencesBecomeGemm) {
  struct Case {
    std::string name;
    std::function<Variable(const Variable& v, const Variable& product)> build;
    double alpha, beta;
  };
  const std::vector<Case> cases = {
      {"momentum", [](const Variable& v, const Variable& p) { return 0.9 * v - 0.01 * p; },
       -0.01, 0.9},
      {"factors after", [](const Variable& v, const Variable& p) { return v * 0.9 - p * 0.01; },
       -0.01, 0.9},
      {"scaled product plus", [](const Variable& v, const Variable& p) { return p * 2.0 + v; },
       2.0, 1.0},
      {"term minus product", [](const Variable& v, const Variable& p) { return v - p; }, -1.0,
       1.0},
      {"product minus scaled term",
       [](const Variable& v, const Variable& p) { return p - 0.5 * v; }, 1.0, -0.5}};
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(c.name + (dtype == DType::Float32 ? " float32" : " float64"));
      Variable x = matrix(dtype, "x");
      Variable g = matrix(dtype, "g");
      Variable v = matrix(dtype, "v");
      const Variable y = c.build(v, dot(transpose(x), g));
      Function f = function({x, g, v}, {y});
      const std::vector<std::string> names = op_names(f);
      for (const char* gone : {"Dot", "Dot22", "Add", "Sub", "Mul"}) {
        EXPECT_FALSE(contains(names, gone)) << gone;
      }
      const ApplyNode* gemm_node = only_gemm(f);
      ASSERT_NE(gemm_node, nullptr);
      EXPECT_NEAR(gemm_node->attrs().get_double("alpha"), c.alpha, 1e-7);
      EXPECT_NEAR(gemm_node->attrs().get_double("beta"), c.beta, 1e-7);
      const std::vector<Tensor> values = {testing::random_tensor(dtype, {9, 5}, 1),
                                          testing::random_tensor(dtype, {9, 7}, 2),
                                          testing::random_tensor(dtype, {5, 7}, 3)};
      const double tolerance = dtype == DType::Float32 ? 1e-5 : 1e-12;
      FunctionOptions unrewritten;
      unrewritten.excluded_rewrites = {"gemm_from_scaled_sum"};
      Function plain = function({x, g, v}, {y}, {}, unrewritten);
      EXPECT_FALSE(contains(op_names(plain), "Gemm"));
      EXPECT_TRUE(testing::all_close(f(values)[0], plain(values)[0], tolerance, tolerance));
      EXPECT_TRUE(testing::fast_matches_reference({x, g, v}, {y}, values, tolerance, tolerance));
    }
  }
}

// A scale that is not a constant, a scaled product that is read twice, and a zero factor (whose
// 0 * inf the elementwise form turns into NaN) leave the elementwise form.
TEST(BlasRewrite, ScaledSumsThatGemmCannotExpressStay) {
  Variable x = matrix(DType::Float32, "x");
  Variable w = matrix(DType::Float32, "W");
  Variable z = matrix(DType::Float32, "z");
  Variable rate = scalar(DType::Float32, "rate");
  const Variable product = dot(x, w);
  EXPECT_FALSE(contains(op_names(function({x, w, z, rate}, {z - rate * product})), "Gemm"));
  const Variable scaled = 0.5 * product;
  EXPECT_FALSE(contains(op_names(function({x, w, z}, {z + scaled, scaled})), "Gemm"));
  const Variable with_zero = 0.0 * z + product;
  Function f = function({x, w, z}, {with_zero});
  EXPECT_FALSE(contains(op_names(f), "Gemm"));
  const Tensor inf = Tensor::full(DType::Float32, {2, 2}, std::numeric_limits<double>::infinity());
  const Tensor ones = Tensor::full(DType::Float32, {2, 2}, 1.0);
  EXPECT_TRUE(std::isnan(f({ones, ones, inf})[0].at(0)));
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
