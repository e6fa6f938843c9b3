// SPDX-License-Identifier: Apache-2.0
// Erf: the error function.
#include <cmath>
#include <concepts>
#include <numbers>

#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kErfScalar{.name = "erf",
                              .arity = 1,
                              .flops_per_element = 1,
                              .transcendental = true,
                              .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct ErfFn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return std::erf(a); }
};

struct ErfSimd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Erf;
  static __m128d apply(__m128d x) { return Sleef_erfd2_u10(x); }
  static __m128 apply(__m128 x) { return Sleef_erff4_u10(x); }
};

std::vector<Variable> pullback_erf(const PullbackContext& ctx) {
  // d/dx erf(x) = 2 / sqrt(pi) * exp(-x^2).
  const Variable& x = ctx.inputs[0];
  return {ctx.output_grads[0] * (std::numbers::inv_sqrtpi * 2.0) * exp(neg(sqr(x)))};
}
}  // namespace

void register_erf(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<ErfFn, 1, ErfSimd>({.name = "Erf",
                                                                .summary = "error function",
                                                                .scalar = &kErfScalar,
                                                                .accepted = detail::DTypeSet::Float,
                                                                .pullback = pullback_erf}));
}

}  // namespace tscope::ops
