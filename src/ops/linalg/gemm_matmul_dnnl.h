// SPDX-License-Identifier: Apache-2.0
// Gemm's float32 path on oneDNN's matmul primitive: with the weights reordered once into the
// blocked layout the primitive chose when they hold still, and the added term read in place by
// the primitive.
#pragma once
#include <cstdint>

#include "tscope/core/tensor.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// out = x.y + z with alpha 1, where z is absent (beta 0), a row of n biases broadcast over the
/// m rows, or a full (m, n) matrix (beta 1), through the node's activation when it has one (an
/// eltwise post-op after the addend), for two kinds of node:
///  - y holds still: a graph constant or a view of one (ONNX's Gemm with transB reads the
///    transpose of its initializer), packed once; or a loop body's invariant input or a view of
///    one (loop_invariants.h), packed once per loop execution. The packed weights live in the
///    node's KernelState, built on the first call for each m and layout; they are a second copy
///    of y that oneDNN allocates, outside the tensor allocator the memory profile measures, so no
///    figure of the profile includes them.
///  - y changes from call to call, and z is a full matrix that is not row-major (a transposed
///    accumulator: the weight gradient a loop's backward step adds to): the primitive reads y as
///    it is and adds z in place, where dnnl_sgemm would first copy z into the output through a
///    transposing walk.
///  - y changes from call to call, is column-major (the transpose of a trained Linear layer's
///    weights), and x has at least 16 rows: the primitive reads y as it is, faster than
///    dnnl_sgemm's transposing pack.
/// Returns false for any other node, or when oneDNN has no implementation; the caller then
/// multiplies with dnnl_sgemm. `out` is the allocated (m, n) output.
[[nodiscard]] bool run_gemm_matmul_dnnl(KernelContext& ctx,
                                        std::int64_t m,
                                        std::int64_t k,
                                        std::int64_t n,
                                        const Dims& z_strides,
                                        Tensor& out);

}  // namespace tscope::ops::detail
