// SPDX-License-Identifier: Apache-2.0
// Exp: e to the power x.
#include <cmath>
#include <concepts>

#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kExpScalar{.name = "exp",
                              .arity = 1,
                              .flops_per_element = 1,
                              .transcendental = true,
                              .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct ExpFn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return std::exp(a); }
};

struct ExpSimd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Exp;
  static __m128d apply(__m128d x) { return Sleef_expd2_u10(x); }
  static __m128 apply(__m128 x) { return Sleef_expf4_u10(x); }
};

std::vector<Variable> pullback_exp(const PullbackContext& ctx) {
  return {ctx.output_grads[0] * ctx.outputs[0]};
}
}  // namespace

void register_exp(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<ExpFn, 1, ExpSimd>({.name = "Exp",
                                                                .summary = "e to the power x",
                                                                .scalar = &kExpScalar,
                                                                .accepted = detail::DTypeSet::Float,
                                                                .pullback = pullback_exp}));
}

}  // namespace tscope::ops
