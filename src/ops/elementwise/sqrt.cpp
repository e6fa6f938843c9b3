// SPDX-License-Identifier: Apache-2.0
// Sqrt: square root. The vector path uses the SSE2 square-root instruction, which is
// correctly rounded like std::sqrt, so no SLEEF call is needed.
#include <cmath>
#include <concepts>

#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kSqrtScalar{.name = "sqrt",
                               .arity = 1,
                               .flops_per_element = 1,
                               .transcendental = false,
                               .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct SqrtFn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return std::sqrt(a); }
};

struct SqrtSimd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Sqrt;
  static __m128d apply(__m128d x) { return _mm_sqrt_pd(x); }
  static __m128 apply(__m128 x) { return _mm_sqrt_ps(x); }
};

std::vector<Variable> pullback_sqrt(const PullbackContext& ctx) {
  return {ctx.output_grads[0] / (2.0 * ctx.outputs[0])};
}
}  // namespace

void register_sqrt(OpRegistry& registry) {
  registry.add(
      detail::make_elementwise_def<SqrtFn, 1, SqrtSimd>({.name = "Sqrt",
                                                         .summary = "square root",
                                                         .scalar = &kSqrtScalar,
                                                         .accepted = detail::DTypeSet::Float,
                                                         .pullback = pullback_sqrt}));
}

}  // namespace tscope::ops
