// SPDX-License-Identifier: Apache-2.0
// Erf: the error function.
#include <cmath>
#include <concepts>
#include <numbers>

#include "erf_float.h"
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

__m128 horner(const float* coefficients, int count, __m128 v) {
  __m128 result = _mm_set1_ps(coefficients[count - 1]);
  for (int k = count - 2; k >= 0; --k) {
    result = _mm_add_ps(_mm_mul_ps(result, v), _mm_set1_ps(coefficients[k]));
  }
  return result;
}

// erf_float.h's fits, as the wide kernels compute them (without fused multiply-adds: the
// baseline instruction set has none).
__m128 erf_float4(__m128 x) {
  using namespace detail;
  const __m128 sign_bit = _mm_set1_ps(-0.0f);
  const __m128 a = _mm_andnot_ps(sign_bit, x);
  const __m128 small = _mm_mul_ps(x, horner(kErfSmall, kErfSmallCount, _mm_mul_ps(x, x)));
  const __m128 clamped = _mm_min_ps(a, _mm_set1_ps(kErfClamp));
  const __m128 one = _mm_set1_ps(1.0f);
  const __m128 t = _mm_div_ps(one, _mm_add_ps(one, clamped));
  const __m128 decay = Sleef_expf4_u10(_mm_xor_ps(sign_bit, _mm_mul_ps(clamped, clamped)));
  const __m128 tail = _mm_mul_ps(decay, horner(kErfLarge, kErfLargeCount, t));
  const __m128 large = _mm_or_ps(_mm_sub_ps(one, tail), _mm_and_ps(sign_bit, x));
  const __m128 use_small = _mm_cmpnge_ps(a, _mm_set1_ps(kErfSplit));  // NaN too
  return _mm_or_ps(_mm_and_ps(use_small, small), _mm_andnot_ps(use_small, large));
}

struct ErfSimd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Erf;
  static __m128d apply(__m128d x) { return Sleef_erfd2_u10(x); }
  static __m128 apply(__m128 x) { return erf_float4(x); }
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
