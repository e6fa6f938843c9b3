// SPDX-License-Identifier: Apache-2.0
#pragma once
// The two arithmetic policies the recurrent cells are written against. A policy supplies a
// row-major product C = alpha * op(A) op(B) + beta * C and in-place sigmoid / tanh over a
// contiguous array:
//  - ReferenceMath: plain loops in double (the reference kernels run on float64 copies);
//  - FastMath<T>: the linalg kernels' gemm (blas_gemm: oneDNN's sgemm for float32, OpenBLAS for
//    float64) and SLEEF's vector functions: the elementwise ops' 256/512-bit kernels where the
//    CPU has them (simd_wide.h), else 128-bit loops.
#include <cblas.h>
#include <emmintrin.h>
#include <sleef.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "../elementwise/simd_wide.h"
#include "../linalg/blas_util.h"

namespace tscope::ops::detail {

/// C *= beta; the degenerate products (k == 0) BLAS may reject.
template <class T>
void scale_matrix(std::int64_t m, std::int64_t n, T beta, T* c, std::int64_t ldc) {
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
  }
}

struct ReferenceMath {
  using Scalar = double;
  static void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                   double alpha, const double* a, std::int64_t lda, const double* b,
                   std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double total = 0;
        for (std::int64_t p = 0; p < k; ++p) {
          const double av = trans_a ? a[p * lda + i] : a[i * lda + p];
          const double bv = trans_b ? b[j * ldb + p] : b[p * ldb + j];
          total += av * bv;
        }
        double& out = c[i * ldc + j];
        out = alpha * total + (beta == 0.0 ? 0.0 : beta * out);
      }
    }
  }
  static void sigmoid(double* values, std::int64_t count) {
    for (std::int64_t i = 0; i < count; ++i) values[i] = 1.0 / (1.0 + std::exp(-values[i]));
  }
  static void tanh(double* values, std::int64_t count) {
    for (std::int64_t i = 0; i < count; ++i) values[i] = std::tanh(values[i]);
  }
};

template <class T>
struct FastMath {
  using Scalar = T;
  static void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                   T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta,
                   T* c, std::int64_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
      scale_matrix(m, n, beta, c, ldc);
      return;
    }
    blas_gemm<T>(trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                 static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
                 static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
  }

  /// The elementwise ops' wide kernel for `fn` on this CPU (in place is allowed), or null.
  static WideKernel<T> wide(WideUnary fn) { return kernel_for<T>(wide_kernels(fn)); }

  // Without wide kernels: SLEEF's 3.5-ULP tanh (faster than the 1-ULP one, and accurate enough for
  // a gate) and sigmoid as 1 / (1 + exp(-x)) with the 1-ULP exp (cheaper than going through
  // tanh); exp overflowing to inf for very negative x gives the right limit 0.
  static void tanh(T* values, std::int64_t count) {
    if (const WideKernel<T> kernel = wide(WideUnary::Tanh)) {
      kernel(values, values, count);
      return;
    }
    std::int64_t i = 0;
    if constexpr (std::is_same_v<T, float>) {
      for (; i + 4 <= count; i += 4) _mm_storeu_ps(values + i, Sleef_tanhf4_u35(_mm_loadu_ps(values + i)));
    } else {
      for (; i + 2 <= count; i += 2) _mm_storeu_pd(values + i, Sleef_tanhd2_u35(_mm_loadu_pd(values + i)));
    }
    for (; i < count; ++i) values[i] = std::tanh(values[i]);
  }

  static void sigmoid(T* values, std::int64_t count) {
    if (const WideKernel<T> kernel = wide(WideUnary::Sigmoid)) {
      kernel(values, values, count);
      return;
    }
    std::int64_t i = 0;
    if constexpr (std::is_same_v<T, float>) {
      const __m128 one = _mm_set1_ps(1.0F);
      for (; i + 4 <= count; i += 4) {
        const __m128 e = Sleef_expf4_u10(_mm_sub_ps(_mm_setzero_ps(), _mm_loadu_ps(values + i)));
        _mm_storeu_ps(values + i, _mm_div_ps(one, _mm_add_ps(one, e)));
      }
    } else {
      const __m128d one = _mm_set1_pd(1.0);
      for (; i + 2 <= count; i += 2) {
        const __m128d e = Sleef_expd2_u10(_mm_sub_pd(_mm_setzero_pd(), _mm_loadu_pd(values + i)));
        _mm_storeu_pd(values + i, _mm_div_pd(one, _mm_add_pd(one, e)));
      }
    }
    for (; i < count; ++i) values[i] = T(1) / (T(1) + std::exp(-values[i]));
  }
};

}  // namespace tscope::ops::detail
