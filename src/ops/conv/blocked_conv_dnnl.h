// SPDX-License-Identifier: Apache-2.0
// The oneDNN path of BlockedConv: a forward-inference convolution on nChw8c or nChw16c data (or
// plain nchw input for OhwiBo weights) with packed weights, the bias and the clamp applied by the primitive
// (bias argument and an eltwise post-op), kept in the node's KernelState until the shapes change.
#pragma once
#include "channel_blocks.h"
#include "conv_geometry.h"
#include "tscope/core/tensor.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// What BlockedConv applies after the sum of products:
/// y = clamp(conv + bias + residual, lower, upper).
struct ConvEpilogue {
  bool has_bias = false;
  bool has_residual = false;  ///< a blocked tensor of y's shape (ResNet's skip connection)
  double lower = 0;  ///< -inf: no lower bound
  double upper = 0;  ///< +inf: no upper bound
};

/// Computes y (already allocated, blocked) from contiguous float32 x, packed w, bias and residual
/// (null when the epilogue has none), with oneDNN's Winograd algorithm when `winograd` (BlockedConv's
/// attr) and oneDNN has it for the shape, else the direct one. The primitive is kept in
/// `primitive` (a slot of the node's state) until x's shape changes. Returns false when oneDNN has
/// no implementation; the caller then runs the reference kernel.
[[nodiscard]] bool run_blocked_conv_dnnl(const KernelContext& ctx,
                                         std::shared_ptr<KernelState>& primitive,
                                         const ConvGeometry& geometry,
                                         WeightLayout layout, const ConvEpilogue& epilogue,
                                         bool winograd, const Tensor& x, const Tensor& w, const Tensor* bias,
                                         const Tensor* residual, const Tensor& y);

}  // namespace tscope::ops::detail
