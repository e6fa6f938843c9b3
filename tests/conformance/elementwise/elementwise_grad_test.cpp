// SPDX-License-Identifier: Apache-2.0
// Gradients of every differentiable elementwise op (from the shared case table) against central
// finite differences at float64 points inside each op's domain, with broadcasting inputs.
#include <ostream>

#include "elementwise_cases.h"

namespace tscope {
namespace {

using testing::ElementwiseCase;
using testing::gradient_matches_numeric;
using testing::random_tensor;

struct GradParam {
  const ElementwiseCase* op_case;
};

void PrintTo(const GradParam& p, std::ostream* os) { *os << p.op_case->op; }

std::vector<GradParam> grad_params() {
  std::vector<GradParam> params;
  for (const ElementwiseCase& c : testing::elementwise_cases()) {
    if (op_def(c.op).pullback != nullptr) params.push_back({&c});
  }
  return params;
}

class ElementwiseGrad : public ::testing::TestWithParam<GradParam> {};

TEST_P(ElementwiseGrad, MatchesFiniteDifferences) {
  const ElementwiseCase& c = *GetParam().op_case;
  // Broadcasting shapes, so the pullbacks' sum_to_type is exercised too.
  const std::vector<Dims> shapes = {{3, 4}, {1, 4}, {3, 1}};
  std::vector<Tensor> point;
  for (int i = 0; i < c.arity; ++i) {
    const DType dtype = testing::input_dtype(c, i, DType::Float64);
    const testing::Domain domain = testing::domain_for(c.grad_domains, i, dtype);
    point.push_back(random_tensor(dtype, shapes[i], 10 + i, domain.low, domain.high));
  }
  const auto build = [&c](const std::vector<Variable>& inputs) {
    // Cast's table builder goes to int32 (no gradient); differentiate a float round trip.
    if (c.op == "Cast") return cast(cast(inputs[0], DType::Float32), DType::Float64) * 3.0;
    return testing::build_elementwise(c, inputs);
  };
  VerifyGradOptions options;
  if (c.op == "Cast") {
    // Float32 rounding inside: a larger step keeps the difference quotient accurate.
    options.eps = 1e-2;
    options.rtol = 1e-3;
    options.atol = 1e-4;
  }
  EXPECT_TRUE(gradient_matches_numeric(build, point, options));
}

INSTANTIATE_TEST_SUITE_P(Ops,
                         ElementwiseGrad,
                         ::testing::ValuesIn(grad_params()),
                         [](const auto& info) { return info.param.op_case->op; });

TEST(ElementwiseGradComposite, ReluAndChains) {
  EXPECT_TRUE(gradient_matches_numeric([](const auto& v) { return relu(v[0]); },
                                       {random_tensor(DType::Float64, {3, 3}, 3)}));
  EXPECT_TRUE(gradient_matches_numeric(
      [](const auto& v) { return sigmoid(v[0]) * softplus(v[1]) + tanh(v[0] * v[1]); },
      {random_tensor(DType::Float64, {2, 3}, 4), random_tensor(DType::Float64, {3}, 5)}));
}

TEST(ElementwiseGradComposite, ZeroGradientOpsGiveZero) {
  Variable x = vector(DType::Float64, "x");
  Variable cost = sum(floor(x) + round(x) + ceil(x) + sgn(x) + int_div(x, 2.0) +
                      cast(switch_(x > 0.0, x, -x) > 0.5, DType::Float64));
  const auto grads = grad(cost, {x}, GradOptions{.disconnected = DisconnectedPolicy::Zero});
  const auto out = testing::run_graph({x}, grads, {Tensor::from_vector<double>({2}, {1.5, -2.5})});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{0, 0}));
}

TEST(ElementwiseGradComposite, IntegerCastHasNoGradient) {
  Variable x = vector(DType::Float64, "x");
  Variable cost = sum(cast(cast(x, DType::Int32), DType::Float64));
  EXPECT_THROW((void)grad(cost, {x}), Error);  // disconnected: raises by default
  const auto grads = grad(cost, {x}, GradOptions{.disconnected = DisconnectedPolicy::Zero});
  const auto out = testing::run_graph({x}, grads, {Tensor::from_vector<double>({2}, {1.5, 2.5})});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{0, 0}));
}

}  // namespace
}  // namespace tscope
