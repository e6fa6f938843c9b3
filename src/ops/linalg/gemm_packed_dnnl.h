// SPDX-License-Identifier: Apache-2.0
// Gemm's float32 path for inference layers: oneDNN's matmul primitive with the weights reordered
// once into the blocked layout the primitive chose, and the bias added by the primitive.
#pragma once
#include <cstdint>

#include "tscope/core/tensor.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// out = x.y + z for a node whose y never changes (a graph constant, or a view of one: ONNX's
/// Gemm with transB reads the transpose of its initializer) and whose z is absent (beta 0) or a
/// row of n biases broadcast over the m rows (beta 1), with alpha 1. The packed weights live in
/// the node's KernelState, built on the first call for each m (that call pays the reorder); they
/// are a second copy of y that oneDNN allocates, outside the tensor allocator the memory profile
/// measures, so no figure of the profile includes them. Returns false
/// when the node does not qualify or oneDNN has no implementation; the caller then multiplies
/// with dnnl_sgemm. `out` is the allocated (m, n) output.
[[nodiscard]] bool run_gemm_packed_dnnl(KernelContext& ctx, std::int64_t m, std::int64_t k,
                                        std::int64_t n, const Dims& z_strides, Tensor& out);

}  // namespace tscope::ops::detail
