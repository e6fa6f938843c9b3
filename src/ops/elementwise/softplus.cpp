// SPDX-License-Identifier: Apache-2.0
// Softplus: log(1 + exp(x)), computed as max(x, 0) + log1p(exp(-|x|)): no overflow for large x
// and no cancellation for very negative x.
#include <concepts>

#include "scalar_math.h"
#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kSoftplusScalar{.name = "softplus",
                                   .arity = 1,
                                   .flops_per_element = 4,
                                   .transcendental = true,
                                   .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct SoftplusFn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return detail::stable_softplus(a); }
};

// max(x, 0) + log1p(exp(-|x|)) through SLEEF; setting the sign bit gives -|x|. maxpd returns
// 0 for a nan x, but the log1p term is then nan, so nan propagates as in the scalar path.
struct SoftplusSimd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Softplus;
  static __m128d apply(__m128d x) {
    const __m128d tail = Sleef_log1pd2_u10(Sleef_expd2_u10(_mm_or_pd(x, _mm_set1_pd(-0.0))));
    return _mm_add_pd(_mm_max_pd(x, _mm_setzero_pd()), tail);
  }
  static __m128 apply(__m128 x) {
    const __m128 tail = Sleef_log1pf4_u10(Sleef_expf4_u10(_mm_or_ps(x, _mm_set1_ps(-0.0f))));
    return _mm_add_ps(_mm_max_ps(x, _mm_setzero_ps()), tail);
  }
};

std::vector<Variable> pullback_softplus(const PullbackContext& ctx) {
  return {ctx.output_grads[0] * sigmoid(ctx.inputs[0])};
}
}  // namespace

void register_softplus(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<SoftplusFn, 1, SoftplusSimd>(
      {.name = "Softplus",
       .summary = "log(1 + exp(x))",
       .scalar = &kSoftplusScalar,
       .accepted = detail::DTypeSet::Float,
       .pullback = pullback_softplus}));
}

}  // namespace tscope::ops
