// SPDX-License-Identifier: Apache-2.0
// Tanh: hyperbolic tangent.
#include <cmath>
#include <concepts>

#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kTanhScalar{.name = "tanh",
                               .arity = 1,
                               .flops_per_element = 1,
                               .transcendental = true,
                               .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct TanhFn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return std::tanh(a); }
};

// Within 3.5 ULP (SLEEF's u35), as the wide kernels: the 1-ULP tanh costs several times as much.
struct TanhSimd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Tanh;
  static __m128d apply(__m128d x) { return Sleef_tanhd2_u35(x); }
  static __m128 apply(__m128 x) { return Sleef_tanhf4_u35(x); }
};

std::vector<Variable> pullback_tanh(const PullbackContext& ctx) {
  return {ctx.output_grads[0] * (1.0 - sqr(ctx.outputs[0]))};
}
}  // namespace

void register_tanh(OpRegistry& registry) {
  registry.add(
      detail::make_elementwise_def<TanhFn, 1, TanhSimd>({.name = "Tanh",
                                                         .summary = "hyperbolic tangent",
                                                         .scalar = &kTanhScalar,
                                                         .accepted = detail::DTypeSet::Float,
                                                         .pullback = pullback_tanh}));
}

}  // namespace tscope::ops
