// SPDX-License-Identifier: Apache-2.0
// Sin: sine (radians).
#include <cmath>
#include <concepts>

#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kSinScalar{.name = "sin",
                              .arity = 1,
                              .flops_per_element = 1,
                              .transcendental = true,
                              .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct SinFn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return std::sin(a); }
};

struct SinSimd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Sin;
  static __m128d apply(__m128d x) { return Sleef_sind2_u10(x); }
  static __m128 apply(__m128 x) { return Sleef_sinf4_u10(x); }
};

std::vector<Variable> pullback_sin(const PullbackContext& ctx) {
  return {ctx.output_grads[0] * cos(ctx.inputs[0])};
}
}  // namespace

void register_sin(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<SinFn, 1, SinSimd>({.name = "Sin",
                                                                .summary = "sine",
                                                                .scalar = &kSinScalar,
                                                                .accepted = detail::DTypeSet::Float,
                                                                .pullback = pullback_sin}));
}

}  // namespace tscope::ops
