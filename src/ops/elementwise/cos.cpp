// SPDX-License-Identifier: Apache-2.0
// Cos: cosine (radians).
#include <cmath>
#include <concepts>

#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kCosScalar{.name = "cos",
                              .arity = 1,
                              .flops_per_element = 1,
                              .transcendental = true,
                              .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct CosFn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return std::cos(a); }
};

struct CosSimd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Cos;
  static __m128d apply(__m128d x) { return Sleef_cosd2_u10(x); }
  static __m128 apply(__m128 x) { return Sleef_cosf4_u10(x); }
};

std::vector<Variable> pullback_cos(const PullbackContext& ctx) {
  return {neg(ctx.output_grads[0] * sin(ctx.inputs[0]))};
}
}  // namespace

void register_cos(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<CosFn, 1, CosSimd>({.name = "Cos",
                                                                .summary = "cosine",
                                                                .scalar = &kCosScalar,
                                                                .accepted = detail::DTypeSet::Float,
                                                                .pullback = pullback_cos}));
}

}  // namespace tscope::ops
