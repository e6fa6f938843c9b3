// SPDX-License-Identifier: Apache-2.0
// Expm1: exp(x) - 1, accurate for small x.
#include <cmath>
#include <concepts>

#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kExpm1Scalar{.name = "expm1",
                                .arity = 1,
                                .flops_per_element = 1,
                                .transcendental = true,
                                .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct Expm1Fn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return std::expm1(a); }
};

struct Expm1Simd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Expm1;
  static __m128d apply(__m128d x) { return Sleef_expm1d2_u10(x); }
  static __m128 apply(__m128 x) { return Sleef_expm1f4_u10(x); }
};

std::vector<Variable> pullback_expm1(const PullbackContext& ctx) {
  return {ctx.output_grads[0] * (ctx.outputs[0] + 1.0)};
}
}  // namespace

void register_expm1(OpRegistry& registry) {
  registry.add(
      detail::make_elementwise_def<Expm1Fn, 1, Expm1Simd>({.name = "Expm1",
                                                           .summary = "exp(x) - 1",
                                                           .scalar = &kExpm1Scalar,
                                                           .accepted = detail::DTypeSet::Float,
                                                           .pullback = pullback_expm1}));
}

}  // namespace tscope::ops
