// SPDX-License-Identifier: Apache-2.0
// Exp2: 2 to the power x.
#include <cmath>
#include <concepts>
#include <numbers>

#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kExp2Scalar{.name = "exp2",
                               .arity = 1,
                               .flops_per_element = 1,
                               .transcendental = true,
                               .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct Exp2Fn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return std::exp2(a); }
};

struct Exp2Simd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Exp2;
  static __m128d apply(__m128d x) { return Sleef_exp2d2_u10(x); }
  static __m128 apply(__m128 x) { return Sleef_exp2f4_u10(x); }
};

std::vector<Variable> pullback_exp2(const PullbackContext& ctx) {
  return {ctx.output_grads[0] * ctx.outputs[0] * std::numbers::ln2};
}
}  // namespace

void register_exp2(OpRegistry& registry) {
  registry.add(
      detail::make_elementwise_def<Exp2Fn, 1, Exp2Simd>({.name = "Exp2",
                                                         .summary = "2 to the power x",
                                                         .scalar = &kExp2Scalar,
                                                         .accepted = detail::DTypeSet::Float,
                                                         .pullback = pullback_exp2}));
}

}  // namespace tscope::ops
