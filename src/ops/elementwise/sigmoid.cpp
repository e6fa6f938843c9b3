// SPDX-License-Identifier: Apache-2.0
// Sigmoid: 1 / (1 + exp(-x)), computed from exp(-|x|) so it never overflows: for x < 0 it is
// e / (1 + e) with e = exp(x), which keeps full relative precision far into the left tail.
#include <concepts>

#include "scalar_math.h"
#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kSigmoidScalar{.name = "sigmoid",
                                  .arity = 1,
                                  .flops_per_element = 4,
                                  .transcendental = true,
                                  .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct SigmoidFn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return detail::stable_sigmoid(a); }
};

// exp(-|x|) through SLEEF, then the same selection as stable_sigmoid with SSE2 masks;
// setting the sign bit gives -|x|.
struct SigmoidSimd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Sigmoid;
  static __m128d apply(__m128d x) {
    const __m128d e = Sleef_expd2_u10(_mm_or_pd(x, _mm_set1_pd(-0.0)));
    const __m128d r = _mm_div_pd(_mm_set1_pd(1.0), _mm_add_pd(_mm_set1_pd(1.0), e));
    const __m128d non_negative = _mm_cmpge_pd(x, _mm_setzero_pd());
    return _mm_or_pd(_mm_and_pd(non_negative, r), _mm_andnot_pd(non_negative, _mm_mul_pd(e, r)));
  }
  static __m128 apply(__m128 x) {
    const __m128 e = Sleef_expf4_u10(_mm_or_ps(x, _mm_set1_ps(-0.0f)));
    const __m128 r = _mm_div_ps(_mm_set1_ps(1.0f), _mm_add_ps(_mm_set1_ps(1.0f), e));
    const __m128 non_negative = _mm_cmpge_ps(x, _mm_setzero_ps());
    return _mm_or_ps(_mm_and_ps(non_negative, r), _mm_andnot_ps(non_negative, _mm_mul_ps(e, r)));
  }
};

std::vector<Variable> pullback_sigmoid(const PullbackContext& ctx) {
  const Variable& out = ctx.outputs[0];
  return {ctx.output_grads[0] * out * (1.0 - out)};
}
}  // namespace

void register_sigmoid(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<SigmoidFn, 1, SigmoidSimd>(
      {.name = "Sigmoid",
       .summary = "logistic function 1 / (1 + exp(-x))",
       .scalar = &kSigmoidScalar,
       .accepted = detail::DTypeSet::Float,
       .pullback = pullback_sigmoid}));
}

}  // namespace tscope::ops
