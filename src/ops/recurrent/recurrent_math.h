// SPDX-License-Identifier: Apache-2.0
#pragma once
// The two arithmetic policies the recurrent cells are written against. A policy supplies a
// row-major product C = alpha * op(A) op(B) + beta * C and in-place sigmoid / tanh over a
// contiguous array:
//  - ReferenceMath: plain loops in double (the reference kernels run on float64 copies);
//  - FastMath<T>: OpenBLAS gemm and SLEEF's 128-bit vector tanh (sigmoid(x) = (1 + tanh(x/2))/2,
//    one transcendental and no overflow), as the elementwise "simd" kernels use.
#include <cblas.h>
#include <emmintrin.h>
#include <sleef.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

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
    const CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans;
    const CBLAS_TRANSPOSE tb = trans_b ? CblasTrans : CblasNoTrans;
    if constexpr (std::is_same_v<T, float>) {
      cblas_sgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n),
                  static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
                  beta, c, static_cast<int>(ldc));
    } else {
      cblas_dgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n),
                  static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
                  beta, c, static_cast<int>(ldc));
    }
  }

  static void tanh(T* values, std::int64_t count) { apply(values, count, false); }
  static void sigmoid(T* values, std::int64_t count) { apply(values, count, true); }

 private:
  // Sigmoid as 0.5 + 0.5 * tanh(x / 2): bounded, and one vector transcendental per lane.
  static void apply(T* values, std::int64_t count, bool sigmoid) {
    std::int64_t i = 0;
    if constexpr (std::is_same_v<T, float>) {
      const __m128 half = _mm_set1_ps(0.5F);
      for (; i + 4 <= count; i += 4) {
        __m128 v = _mm_loadu_ps(values + i);
        if (sigmoid) v = _mm_mul_ps(v, half);
        v = Sleef_tanhf4_u10(v);
        if (sigmoid) v = _mm_add_ps(half, _mm_mul_ps(half, v));
        _mm_storeu_ps(values + i, v);
      }
    } else {
      const __m128d half = _mm_set1_pd(0.5);
      for (; i + 2 <= count; i += 2) {
        __m128d v = _mm_loadu_pd(values + i);
        if (sigmoid) v = _mm_mul_pd(v, half);
        v = Sleef_tanhd2_u10(v);
        if (sigmoid) v = _mm_add_pd(half, _mm_mul_pd(half, v));
        _mm_storeu_pd(values + i, v);
      }
    }
    for (; i < count; ++i) {
      values[i] = sigmoid ? T(0.5) + T(0.5) * std::tanh(T(0.5) * values[i]) : std::tanh(values[i]);
    }
  }
};

}  // namespace tscope::ops::detail
