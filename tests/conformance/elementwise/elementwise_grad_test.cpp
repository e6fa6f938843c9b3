// SPDX-License-Identifier: Apache-2.0
// Gradients of elementwise ops against central finite differences (float64 points).
#include "support/test_util.h"

namespace tscope {
namespace {

using testing::gradient_matches_numeric;
using testing::random_tensor;

using Builder = std::function<Variable(const std::vector<Variable>&)>;

struct GradCase {
  std::string name;
  Builder build;
  std::vector<Dims> shapes;
  double low = -1.0;
  double high = 1.0;
};

class ElementwiseGrad : public ::testing::TestWithParam<GradCase> {};

TEST_P(ElementwiseGrad, MatchesFiniteDifferences) {
  const GradCase& c = GetParam();
  std::vector<Tensor> point;
  for (std::size_t i = 0; i < c.shapes.size(); ++i) {
    point.push_back(random_tensor(DType::Float64, c.shapes[i], 10 + i, c.low, c.high));
  }
  EXPECT_TRUE(gradient_matches_numeric(c.build, point));
}

const Builder kAdd = [](const auto& v) { return v[0] + v[1]; };
const Builder kSub = [](const auto& v) { return v[0] - v[1]; };
const Builder kMul = [](const auto& v) { return v[0] * v[1]; };
const Builder kDiv = [](const auto& v) { return v[0] / v[1]; };
const Builder kMax = [](const auto& v) { return maximum(v[0], v[1]); };
const Builder kSecond = [](const auto& v) { return second(v[0], v[1]); };

INSTANTIATE_TEST_SUITE_P(
    Ops, ElementwiseGrad,
    ::testing::Values(
        GradCase{"Add_bcast", kAdd, {{3, 4}, {1, 4}}}, GradCase{"Add_rank", kAdd, {{2, 3}, {3}}},
        GradCase{"Sub_bcast", kSub, {{3, 1}, {1, 4}}}, GradCase{"Mul_bcast", kMul, {{2, 3}, {2, 1}}},
        GradCase{"TrueDiv", kDiv, {{3, 2}, {3, 2}}, 0.5, 2.0},
        GradCase{"Maximum", kMax, {{4, 3}, {4, 3}}}, GradCase{"Second", kSecond, {{3, 4}, {1, 4}}},
        GradCase{"Neg", [](const auto& v) { return -v[0]; }, {{5}}},
        GradCase{"Exp", [](const auto& v) { return exp(v[0]); }, {{2, 3}}},
        GradCase{"Log", [](const auto& v) { return log(v[0]); }, {{2, 3}}, 0.5, 2.0},
        GradCase{"Sqr", [](const auto& v) { return sqr(v[0]); }, {{4}}},
        GradCase{"Relu", [](const auto& v) { return relu(v[0]); }, {{3, 3}}}),
    [](const auto& info) { return info.param.name; });

TEST(ElementwiseGradCast, CastRoundTripIsIdentityGradient) {
  // Linear in x, so a large step is exact up to float32 rounding.
  VerifyGradOptions options;
  options.eps = 1e-2;
  options.rtol = 1e-3;
  options.atol = 1e-4;
  EXPECT_TRUE(gradient_matches_numeric(
      [](const auto& v) { return cast(cast(v[0], DType::Float32), DType::Float64) * 3.0; },
      {random_tensor(DType::Float64, {4}, 3)}, options));
}

TEST(ElementwiseGradCast, IntegerCastHasNoGradient) {
  Variable x = vector(DType::Float64, "x");
  Variable cost = sum(cast(cast(x, DType::Int32), DType::Float64));
  EXPECT_THROW((void)grad(cost, {x}), Error);  // disconnected: raises by default
  const auto grads = grad(cost, {x}, GradOptions{.disconnected = DisconnectedPolicy::Zero});
  const auto out = testing::run_graph({x}, grads, {Tensor::from_vector<double>({2}, {1.5, 2.5})});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{0, 0}));
}

}  // namespace
}  // namespace tscope
