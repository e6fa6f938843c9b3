// SPDX-License-Identifier: Apache-2.0
// The 256-bit wide kernels (simd_wide.h). This file alone is compiled with -mavx2 -mfma; its
// functions run only where the CPU has those (simd_wide.cpp checks).
#include <immintrin.h>
#include <sleef.h>

#include <cstdint>

#include "erf_float.h"
#include "simd_wide.h"

namespace tscope::ops::detail {
namespace {

using VF = __m256;
using VD = __m256d;

inline VF load(const float* p) { return _mm256_loadu_ps(p); }
inline VD load(const double* p) { return _mm256_loadu_pd(p); }
inline void store(float* p, VF v) { _mm256_storeu_ps(p, v); }
inline void store(double* p, VD v) { _mm256_storeu_pd(p, v); }
inline VF splat_as(VF, double v) { return _mm256_set1_ps(static_cast<float>(v)); }
inline VD splat_as(VD, double v) { return _mm256_set1_pd(v); }
inline VF add(VF a, VF b) { return _mm256_add_ps(a, b); }
inline VD add(VD a, VD b) { return _mm256_add_pd(a, b); }
inline VF mul(VF a, VF b) { return _mm256_mul_ps(a, b); }
inline VD mul(VD a, VD b) { return _mm256_mul_pd(a, b); }
inline VF div(VF a, VF b) { return _mm256_div_ps(a, b); }
inline VD div(VD a, VD b) { return _mm256_div_pd(a, b); }
inline VF max(VF a, VF b) { return _mm256_max_ps(a, b); }
inline VD max(VD a, VD b) { return _mm256_max_pd(a, b); }
inline VF neg_abs(VF x) { return _mm256_or_ps(x, _mm256_set1_ps(-0.0f)); }
inline VD neg_abs(VD x) { return _mm256_or_pd(x, _mm256_set1_pd(-0.0)); }
inline VF select_nonnegative(VF x, VF a, VF b) {
  return _mm256_blendv_ps(b, a, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
}
inline VD select_nonnegative(VD x, VD a, VD b) {
  return _mm256_blendv_pd(b, a, _mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_GE_OQ));
}
inline VF abs_v(VF x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
inline VF min(VF a, VF b) { return _mm256_min_ps(a, b); }
inline VF fma(VF a, VF b, VF c) { return _mm256_fmadd_ps(a, b, c); }
inline VF copy_sign(VF magnitude, VF sign) {
  return _mm256_or_ps(magnitude, _mm256_and_ps(sign, _mm256_set1_ps(-0.0f)));
}
inline VF select_below(VF x, VF bound, VF a, VF b) {
  return _mm256_blendv_ps(b, a, _mm256_cmp_ps(x, bound, _CMP_NGE_UQ));
}
inline VF sqrt_v(VF x) { return _mm256_sqrt_ps(x); }
inline VD sqrt_v(VD x) { return _mm256_sqrt_pd(x); }

// The AVX2 builds by name: the unsuffixed 256-bit entry points dispatch among AVX, FMA4 and
// AVX2 at every call.
// `accuracy`: SLEEF's error bound, u10 (1 ULP) except tanh at u35 (3.5 ULP), whose 1-ULP
// version costs several times as much for no difference a float32 model can see.
#define TSCOPE_SLEEF_256(name, accuracy)                                        \
  inline VF sleef_##name(VF x) { return Sleef_##name##f8_##accuracy##avx2(x); } \
  inline VD sleef_##name(VD x) { return Sleef_##name##d4_##accuracy##avx2(x); }
TSCOPE_SLEEF_256(exp, u10)
TSCOPE_SLEEF_256(exp2, u10)
TSCOPE_SLEEF_256(expm1, u10)
TSCOPE_SLEEF_256(log, u10)
TSCOPE_SLEEF_256(log2, u10)
TSCOPE_SLEEF_256(log10, u10)
TSCOPE_SLEEF_256(log1p, u10)
TSCOPE_SLEEF_256(sin, u10)
TSCOPE_SLEEF_256(cos, u10)
TSCOPE_SLEEF_256(tanh, u35)
// float32 erf is erf_float.h's fit (ErfOp); float64 keeps SLEEF's.
inline VD sleef_erf(VD x) { return Sleef_erfd4_u10avx2(x); }
#undef TSCOPE_SLEEF_256

#include "simd_wide_kernels.inc"

}  // namespace

const WideKernels* wide_kernels_avx2() noexcept { return kTable; }

}  // namespace tscope::ops::detail
