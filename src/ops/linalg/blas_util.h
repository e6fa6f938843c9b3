// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers shared by the BLAS-backed linalg kernels: how a strided tensor is handed to CBLAS
// (transpose flag + leading dimension, or an increment for vectors), the copy taken when BLAS
// cannot read the layout, and the typed CBLAS calls.
#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "tscope/core/tensor.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// A 2-D operand as CBLAS sees it (row-major). `tensor` is the input itself or, when its strides
/// fit no BLAS layout, a contiguous copy (recorded by record_blas_copy()).
struct BlasMatrix {
  Tensor tensor;
  CBLAS_TRANSPOSE transpose = CblasNoTrans;
  int leading = 1;
};

/// A 1-D operand: data pointer origin plus increment (CBLAS rejects increment 0 and we never pass
/// negative strides, so broadcast or reversed vectors are copied).
struct BlasVector {
  Tensor tensor;
  int increment = 1;
};

/// Views `matrix` (rank 2) for CBLAS, copying only when neither axis is unit-stride.
[[nodiscard]] BlasMatrix blas_matrix(const Tensor& matrix, const KernelContext& ctx);
/// Views `vector` (rank 1) for CBLAS, copying only when its stride is not positive.
[[nodiscard]] BlasVector blas_vector(const Tensor& vector, const KernelContext& ctx);

/// Counts a copy forced by an input layout BLAS cannot read (see linalg.h blas_copy_stats()).
void record_blas_copy(const KernelContext& ctx, std::int64_t bytes);

/// Throws ShapeMismatch naming the node when a kernel's input shapes disagree.
[[noreturn]] void throw_kernel_shape_error(const KernelContext& ctx, const std::string& message);

/// Products of fewer flops run on the calling thread alone (sgemm_row_major).
inline constexpr double kMinFlopsForThreads = 4e6;

/// Row-major float32 gemm on oneDNN's sgemm, falling back to CBLAS where oneDNN declines. Float32
/// products run on the OpenMP threads the convolutions and Gemm use: alternating with OpenBLAS's
/// own pool made each library's idle workers spin and take cores from the other's next call.
void sgemm_row_major(CBLAS_TRANSPOSE transpose_a,
                     CBLAS_TRANSPOSE transpose_b,
                     int m,
                     int n,
                     int k,
                     float alpha,
                     const float* a,
                     int lda,
                     const float* b,
                     int ldb,
                     float beta,
                     float* c,
                     int ldc);

template <class T>
void blas_gemm(CBLAS_TRANSPOSE transpose_a, CBLAS_TRANSPOSE transpose_b, int m, int n, int k,
               T alpha, const T* a, int lda, const T* b, int ldb, T beta, T* c, int ldc) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm_row_major(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    cblas_dgemm(CblasRowMajor, transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c,
                ldc);
  }
}

/// C (m x n, contiguous) = alpha * A . B + beta * C, with operands as blas_matrix() made them.
template <class T>
void blas_gemm_operands(const BlasMatrix& a, const BlasMatrix& b, std::int64_t m, std::int64_t n,
                        std::int64_t k, T alpha, T beta, T* c) {
  blas_gemm<T>(a.transpose, b.transpose, static_cast<int>(m), static_cast<int>(n),
               static_cast<int>(k), alpha, static_cast<const T*>(a.tensor.raw_data()), a.leading,
               static_cast<const T*>(b.tensor.raw_data()), b.leading, beta, c,
               static_cast<int>(std::max<std::int64_t>(n, 1)));
}

/// True for float32/float64 inputs that all share one dtype: the BLAS kernels' domain.
[[nodiscard]] bool all_same_float_dtype(std::span<const Variable> inputs);

/// The library a gemm-backed node runs, for the profile's impl column: "dnnl" for float32
/// (sgemm_row_major), "blas" for float64.
[[nodiscard]] std::string_view gemm_library_label(std::span<const Variable> inputs, const Attrs&);

}  // namespace tscope::ops::detail

namespace tscope::ops::detail {

/// Element at `element_offset` (in elements, from the tensor's origin) as double: the reference
/// kernels' strided read.
inline double element_at(const Tensor& tensor, std::int64_t element_offset) {
  return visit_dtype(tensor.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return static_cast<double>(static_cast<const T*>(tensor.raw_data())[element_offset]);
  });
}

/// Stores `value` at flat index `index` of a contiguous float tensor.
inline void store_at(Tensor& tensor, std::int64_t index, double value) {
  if (tensor.dtype() == DType::Float32) {
    static_cast<float*>(tensor.raw_data())[index] = static_cast<float>(value);
  } else {
    static_cast<double*>(tensor.raw_data())[index] = value;
  }
}

/// Throws TypeMismatch unless every input is float32/float64 of one dtype and has the given rank.
void check_float_inputs(const InferContext& ctx, std::initializer_list<int> ranks);

}  // namespace tscope::ops::detail
