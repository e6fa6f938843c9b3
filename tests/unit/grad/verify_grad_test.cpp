// SPDX-License-Identifier: Apache-2.0
// verify_grad checks the checker: an op whose pullback is wrong, or NaN, must fail it; the same op
// with the right pullback must pass. The op is x * x with a pullback chosen per test, kept out of
// the registry so that no other test sees it.
#include <limits>
#include <source_location>

#include "support/test_util.h"
#include "tscope/graph/constructors.h"

namespace tscope {
namespace {

std::vector<Type> infer_square(const InferContext& ctx) { return {ctx.input_type(0)}; }

void compute_square(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());
  for (std::int64_t i = 0; i < x.numel(); ++i) out.data<double>()[i] = x.at(i) * x.at(i);
}

std::vector<Variable> right_pullback(const PullbackContext& ctx) {
  return {ctx.output_grads[0] * ctx.inputs[0] * 2.0};
}

std::vector<Variable> wrong_pullback(const PullbackContext& ctx) {
  return {ctx.output_grads[0] * ctx.inputs[0]};  // misses the factor 2
}

std::vector<Variable> nan_pullback(const PullbackContext& ctx) {
  return {ctx.output_grads[0] * std::numeric_limits<double>::quiet_NaN()};
}

OpDef square_with(std::string_view name, PullbackFn pullback) {
  return OpDef{.name = name,
               .family = "Test",
               .summary = "x * x with a chosen pullback",
               .num_inputs = 1,
               .infer = infer_square,
               .reference = {"ref", compute_square},
               .pullback = pullback};
}

VerifyGradResult check(const OpDef& op) {
  const Tensor point = Tensor::from_vector<double>({3}, {0.5, -1.25, 2.0});
  return verify_grad(
      [&op](const std::vector<Variable>& inputs) {
        return apply_op1(op, {inputs[0]}, {}, std::source_location::current());
      },
      {point});
}

TEST(VerifyGrad, PassesTheRightPullback) {
  static const OpDef op = square_with("TestSquareRight", right_pullback);
  const VerifyGradResult result = check(op);
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_LT(result.max_abs_error, 1e-6);
}

TEST(VerifyGrad, FailsAWrongPullback) {
  static const OpDef op = square_with("TestSquareWrong", wrong_pullback);
  const VerifyGradResult result = check(op);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.message.find("input 0 element 0"), std::string::npos) << result.message;
}

TEST(VerifyGrad, FailsANanPullback) {
  static const OpDef op = square_with("TestSquareNan", nan_pullback);
  const VerifyGradResult result = check(op);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.message.find("not finite"), std::string::npos) << result.message;
}

TEST(VerifyGrad, FailsANanFunction) {
  // log of a negative number: the numeric gradient is NaN too, and NaN == NaN must not pass.
  const VerifyGradResult result =
      verify_grad([](const std::vector<Variable>& inputs) { return log(inputs[0]); },
                  {Tensor::from_vector<double>({2}, {-1.0, -2.0})});
  EXPECT_FALSE(result.ok);
}

}  // namespace
}  // namespace tscope
