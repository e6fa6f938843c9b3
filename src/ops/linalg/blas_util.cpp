// SPDX-License-Identifier: Apache-2.0
#include "blas_util.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "tscope/graph/apply.h"
#include "tscope/ops/linalg.h"
#include "tscope/threads/thread_count.h"

namespace tscope {
namespace {
std::atomic<std::int64_t> g_copies{0};
std::atomic<std::int64_t> g_copied_bytes{0};
// Per-node counts are written only on the (slow) copy path, so a mutex costs nothing measurable.
std::mutex g_node_mutex;
std::unordered_map<std::int64_t, BlasCopyStats>& node_stats() {
  // Leaked: profile snapshots taken by the exit-time writer read it.
  static auto& stats = *new std::unordered_map<std::int64_t, BlasCopyStats>();
  return stats;
}
}  // namespace

BlasCopyStats blas_copy_stats() { return {g_copies.load(), g_copied_bytes.load()}; }

BlasCopyStats blas_copy_stats_for_node(std::int64_t node_id) {
  std::lock_guard lock(g_node_mutex);
  const auto it = node_stats().find(node_id);
  return it == node_stats().end() ? BlasCopyStats{} : it->second;
}

}  // namespace tscope

namespace tscope::ops::detail {

void record_blas_copy(const KernelContext& ctx, std::int64_t bytes) {
  g_copies.fetch_add(1, std::memory_order_relaxed);
  g_copied_bytes.fetch_add(bytes, std::memory_order_relaxed);
  if (ctx.node == nullptr) return;
  std::lock_guard lock(g_node_mutex);
  BlasCopyStats& stats = node_stats()[ctx.node->id()];
  ++stats.copies;
  stats.bytes += bytes;
}

BlasMatrix blas_matrix(const Tensor& matrix, const KernelContext& ctx) {
  const Dims& strides = matrix.strides();
  const std::int64_t rows = matrix.shape()[0];
  const std::int64_t cols = matrix.shape()[1];
  // A unit stride on one axis and a stride at least the other extent on the other is a (possibly
  // transposed) row-major matrix with a leading dimension; size-1 axes may have any stride.
  const bool rows_ok = rows <= 1 || strides[0] >= std::max<std::int64_t>(cols, 1);
  if ((strides[1] == 1 || cols <= 1) && rows_ok) {
    const std::int64_t leading = rows <= 1 ? std::max<std::int64_t>(cols, 1) : strides[0];
    return {matrix, CblasNoTrans, static_cast<int>(leading)};
  }
  const bool cols_ok = cols <= 1 || strides[1] >= std::max<std::int64_t>(rows, 1);
  if ((strides[0] == 1 || rows <= 1) && cols_ok) {
    const std::int64_t leading = cols <= 1 ? std::max<std::int64_t>(rows, 1) : strides[1];
    return {matrix, CblasTrans, static_cast<int>(leading)};
  }
  record_blas_copy(ctx, matrix.nbytes());
  return {matrix.clone(), CblasNoTrans, static_cast<int>(std::max<std::int64_t>(cols, 1))};
}

BlasVector blas_vector(const Tensor& vector, const KernelContext& ctx) {
  const std::int64_t stride = vector.strides()[0];
  if (stride >= 1 || vector.shape()[0] <= 1) {
    return {vector, static_cast<int>(std::max<std::int64_t>(stride, 1))};
  }
  record_blas_copy(ctx, vector.nbytes());
  return {vector.clone(), 1};
}

void throw_kernel_shape_error(const KernelContext& ctx, const std::string& message) {
  Error error(ErrorKind::ShapeMismatch, message);
  if (ctx.node != nullptr) error.add_context("in " + ctx.node->describe());
  throw error;
}

bool all_same_float_dtype(std::span<const Variable> inputs) {
  const DType dtype = inputs[0].dtype();
  if (dtype != DType::Float32 && dtype != DType::Float64) return false;
  return std::all_of(inputs.begin(), inputs.end(),
                     [&](const Variable& input) { return input.dtype() == dtype; });
}

std::string_view gemm_library_label(std::span<const Variable> inputs, const Attrs&) {
  return inputs[0].dtype() == DType::Float32 ? "dnnl" : "blas";
}

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
                     int ldc) {
  // A small product (one step of a loop's recurrent gemm) finishes on one thread before a second
  // could join; waking the team costs more, and the woken thread then spins beside the next node.
  std::optional<threads::SerialScope> one_thread;
  if (2.0 * m * n * k < kMinFlopsForThreads) one_thread.emplace();
  // dnnl_sgemm takes the same row-major operands as cblas_sgemm, transposes as 'N'/'T'.
  const auto flag = [](CBLAS_TRANSPOSE t) { return t == CblasNoTrans ? 'N' : 'T'; };
  if (dnnl_sgemm(flag(transpose_a), flag(transpose_b), m, n, k, alpha, a, lda, b, ldb, beta, c,
                 ldc) == dnnl_success) {
    return;
  }
  cblas_sgemm(CblasRowMajor, transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}

}  // namespace tscope::ops::detail

namespace tscope::ops::detail {

void check_float_inputs(const InferContext& ctx, std::initializer_list<int> ranks) {
  std::string types;
  for (const Variable& input : ctx.inputs) {
    types += (types.empty() ? "" : ", ") + input.type().to_string();
  }
  if (!all_same_float_dtype(ctx.inputs)) {
    throw_error(ErrorKind::TypeMismatch, "{}: inputs must share one float dtype; got {}",
                ctx.op.name, types);
  }
  int index = 0;
  for (int rank : ranks) {
    if (ctx.input_type(index).rank() != rank) {
      throw_error(ErrorKind::TypeMismatch, "{}: input {} must have rank {}; got {}", ctx.op.name,
                  index, rank, types);
    }
    ++index;
  }
}

}  // namespace tscope::ops::detail
