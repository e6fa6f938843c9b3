// SPDX-License-Identifier: Apache-2.0
// The oneDNN path of the pooling ops, with the primitive cached per node as for convolutions.
#pragma once
#include "dnnl_accepts.h"
#include "pool_geometry.h"
#include "tscope/core/tensor.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

enum class PoolKind { Max, AverageIncludePad, AverageExcludePad };

/// y = pool(x) for contiguous float32 tensors (y already allocated), plain (`channel_block` 0)
/// or both in blocks of `channel_block` channels, nChw8c or nChw16c (channel_blocks.h). Returns false when oneDNN has no
/// implementation for these shapes; the caller then runs the reference kernel.
[[nodiscard]] bool run_pool_forward_dnnl(KernelContext& ctx, PoolKind kind,
                                         const PoolGeometry& geometry, const Tensor& x,
                                         const Tensor& y, std::int64_t channel_block = 0);

/// dx = the average pooling's gradient of dy.
[[nodiscard]] bool run_avg_pool_backward_dnnl(KernelContext& ctx, PoolKind kind,
                                              const PoolGeometry& geometry, const Tensor& dy,
                                              const Tensor& dx);

/// dx = dy routed to each window's maximum of x. oneDNN finds the maxima through a workspace that
/// only its training-mode forward pass writes, so this runs that forward pass first (into node
/// scratch) and then the backward pass: both are counted in this node's time. `channel_block` as
/// for the forward pass (x, dy and dx alike).
[[nodiscard]] bool run_max_pool_backward_dnnl(KernelContext& ctx,
                                              const PoolGeometry& geometry,
                                              const Tensor& x,
                                              const Tensor& dy,
                                              const Tensor& dx,
                                              std::int64_t channel_block = 0);

}  // namespace tscope::ops::detail
