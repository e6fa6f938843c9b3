// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Linear algebra builders. Matrix products run through CBLAS (OpenBLAS); every op also has a
/// plain-loop reference kernel. The rewrite pipeline turns a 2-D dot into Dot22 and a Dot22 plus a
/// broadcast add into Gemm, so users normally write only dot().
///
///   Variable h = dot(x, W) + b;   // x (n, 784) . W (784, 512) -> Gemm after rewriting
///
/// BLAS reads strided inputs in place through transpose flags, leading dimensions and vector
/// increments. When an input layout fits none of these (both axes strided, a broadcast or reversed
/// vector), the kernel copies it to a contiguous buffer and counts the copy in blas_copy_stats().
#include <cstdint>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>

#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

/// Matrix/vector product: 2-D.2-D, 2-D.1-D, 1-D.2-D, 1-D.1-D (inner product).
Variable dot(const Variable& a, const Variable& b,
             const std::source_location& location = std::source_location::current());

/// Matrix product of two 2-D float inputs of one dtype (Theano's Dot22). Throws TypeMismatch for
/// other ranks or dtypes, ShapeMismatch for static inner dimensions that differ.
Variable dot22(const Variable& x, const Variable& y,
               const std::source_location& location = std::source_location::current());

/// beta * z + alpha * x.y (Theano's Gemm{no_inplace}); z broadcasts to the (m, n) product where its
/// static dims are 1 (a bias row (n,) or a column (m, 1)). Inputs share one float dtype.
Variable gemm(const Variable& z, const Variable& x, const Variable& y, double alpha = 1.0,
              double beta = 1.0,
              const std::source_location& location = std::source_location::current());

/// beta * z + alpha * a.x for a 2-D `a` and 1-D `x`, `z` (Theano's Gemv).
Variable gemv(const Variable& z, const Variable& a, const Variable& x, double alpha = 1.0,
              double beta = 1.0,
              const std::source_location& location = std::source_location::current());

/// a + alpha * outer(x, y) for a 2-D `a` and 1-D `x`, `y` (Theano's Ger).
Variable ger(const Variable& a, const Variable& x, const Variable& y, double alpha = 1.0,
             const std::source_location& location = std::source_location::current());

/// Batched matrix product: (b, m, k) . (b, k, n) -> (b, m, n).
Variable batched_dot(const Variable& x, const Variable& y,
                     const std::source_location& location = std::source_location::current());

/// The BLAS library and threading in use, e.g. "OpenBLAS 0.3.21 (pthread, 2 threads, Haswell)".
[[nodiscard]] std::string blas_description();

/// The OpenBLAS core type (the value for OPENBLAS_CORETYPE) this CPU should run, when OpenBLAS's
/// own detection chose kernels without AVX2 on a CPU that has it: OpenBLAS 0.3.21 takes a
/// Sapphire Rapids Xeon for a "Prescott" and runs SSE3 kernels, several times slower than its
/// "SkylakeX" ones. "SkylakeX" with AVX-512, "Haswell" with AVX2 and FMA; nullopt
/// when the detected core is fine or the build cannot switch (no DYNAMIC_ARCH). The variable is
/// read when the library loads, so only a new process can use the answer (the CLI re-executes
/// itself with it).
[[nodiscard]] std::optional<std::string> recommended_blas_core();
/// The decision behind recommended_blas_core(), from the detected core name, the library's
/// build configuration and the CPU's vector extensions.
[[nodiscard]] std::optional<std::string> recommended_blas_core(std::string_view detected_core,
                                                               std::string_view config,
                                                               bool cpu_avx2_fma, bool cpu_avx512);

/// Copies BLAS kernels made because an input's strides fit no BLAS layout.
struct BlasCopyStats {
  std::int64_t copies = 0;
  std::int64_t bytes = 0;
};
/// Totals for the process (thread-safe).
[[nodiscard]] BlasCopyStats blas_copy_stats();
/// Totals for one apply node, by ApplyNode::id() (the profiler's non-contiguous BLAS tip reads it).
[[nodiscard]] BlasCopyStats blas_copy_stats_for_node(std::int64_t node_id);

}  // namespace tscope

#pragma GCC visibility pop
