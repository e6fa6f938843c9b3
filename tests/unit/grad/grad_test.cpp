// SPDX-License-Identifier: Apache-2.0
#include <cmath>

#include "support/test_util.h"
#include "tscope/core/process_counters.h"

namespace tscope {
namespace {

TEST(Grad, CostMustBeAFloatScalar) {
  Variable x = vector(DType::Float64, "x");
  EXPECT_THROW((void)grad(x * 2.0, {x}), Error);
  Variable n = scalar(DType::Int64, "n");
  EXPECT_THROW((void)grad(n + 1, {n}), Error);
}

TEST(Grad, DisconnectedInputRaisesByDefaultAndCanBeZero) {
  Variable x = vector(DType::Float64, "x");
  Variable unused = vector(DType::Float64, "unused");
  Variable cost = sum(x * x);
  try {
    (void)grad(cost, {unused});
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("unused"), std::string::npos);
  }
  const auto grads = grad(cost, {x, unused}, GradOptions{.disconnected = DisconnectedPolicy::Zero});
  const auto out = testing::run_graph({x, unused}, grads,
                                      {Tensor::from_vector<double>({2}, {1, 2}),
                                       Tensor::from_vector<double>({2}, {5, 5})});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{2, 4}));
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{0, 0}));
}

TEST(Grad, ConsideredConstantsStopTheGradient) {
  // cost = sum(y * x) with y = exp(x): d/dx = exp(x) (1 + x); with y constant, only exp(x).
  Variable x = vector(DType::Float64, "x");
  Variable y = exp(x);
  Variable cost = sum(y * x);
  const Tensor values = Tensor::from_vector<double>({3}, {-1.0, 0.5, 2.0});
  const auto full = testing::run_graph({x}, grad(cost, {x}), {values});
  const auto stopped =
      testing::run_graph({x}, grad(cost, {x}, GradOptions{.consider_constant = {y}}), {values});
  for (std::int64_t i = 0; i < 3; ++i) {
    const double v = values.at(i);
    EXPECT_DOUBLE_EQ(full[0].at(i), std::exp(v) * (1 + v));
    EXPECT_DOUBLE_EQ(stopped[0].at(i), std::exp(v));
  }
  // A wrt considered constant is disconnected.
  EXPECT_THROW((void)grad(cost, {y}, GradOptions{.consider_constant = {y}}), Error);
  const auto zero = testing::run_graph(
      {x}, grad(cost, {y}, GradOptions{.disconnected = DisconnectedPolicy::Zero,
                                       .consider_constant = {y}}),
      {values});
  EXPECT_EQ(zero[0].to_doubles(), (std::vector<double>{0, 0, 0}));
}

TEST(Grad, SharedSubexpressionsAccumulate) {
  Variable x = scalar(DType::Float64, "x");
  Variable y = x * x;
  Variable cost = y * y + y;  // d/dx = 4x^3 + 2x
  const auto g = grad(cost, {x});
  const auto out = testing::run_graph({x}, g, {Tensor::scalar(3.0)});
  EXPECT_DOUBLE_EQ(out[0].at(0), 4 * 27 + 6);
}

TEST(Grad, GradientNodesPointAtTheForwardNode) {
  Variable x = vector(DType::Float64, "x");
  Variable y = exp(x);
  const auto g = grad(sum(y), {x});
  ASSERT_NE(g[0].owner(), nullptr);
  EXPECT_EQ(g[0].owner()->provenance().user_op, "grad(Exp)");
  EXPECT_EQ(g[0].owner()->provenance().site.line, y.owner()->provenance().site.line);
}

TEST(Grad, TimeIsAccumulatedForTheProfile) {
  const std::int64_t before = grad_time_ns();
  Variable x = vector(DType::Float64, "x");
  (void)grad(sum(x), {x});
  EXPECT_GT(grad_time_ns(), before);
}

TEST(Grad, MlpGradientMatchesFiniteDifferences) {
  auto build = [](const std::vector<Variable>& v) {
    Variable h = relu(dot(v[0], v[1]) + v[2]);
    return sum(h * h, {1});
  };
  std::vector<Tensor> point = {testing::random_tensor(DType::Float64, {3, 4}, 1),
                               testing::random_tensor(DType::Float64, {4, 5}, 2),
                               testing::random_tensor(DType::Float64, {5}, 3)};
  EXPECT_TRUE(testing::gradient_matches_numeric(build, point));
}

}  // namespace
}  // namespace tscope
