// SPDX-License-Identifier: Apache-2.0
// The oneDNN path of Conv, ConvGradI and ConvGradW. The primitive for a node is built on its first
// call and kept in the instruction's KernelState until the shapes change.
#pragma once
#include "dnnl_accepts.h"
#include "conv_geometry.h"
#include "tscope/core/tensor.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

enum class ConvDirection {
  Forward,          ///< y = conv(x, w)
  BackwardData,     ///< x = gradient w.r.t. the input, from w and y = dy
  BackwardWeights,  ///< w = gradient w.r.t. the weights, from x and y = dy
};

/// How x and y are stored: plain (block 0) or channel-blocked (nChw8c, nChw16c; 2-D only).
/// The weights are always plain OIHW. With `winograd` (the blocked gradient ops' attr) the call
/// runs oneDNN's Winograd algorithm where oneDNN has it for the shapes, else the direct one.
struct ConvActivationBlocks {
  std::int64_t x = 0;
  std::int64_t y = 0;
  bool winograd = false;
};

/// Computes the direction's result into its (already allocated) tensor among contiguous float32
/// `x`, `w`, `y`, stored as `blocks` says. Returns false when oneDNN has no implementation for
/// these shapes; the caller then runs the reference kernel.
[[nodiscard]] bool run_conv_dnnl(KernelContext& ctx,
                                 ConvDirection direction,
                                 const ConvGeometry& geometry,
                                 const Tensor& x,
                                 const Tensor& w,
                                 const Tensor& y,
                                 ConvActivationBlocks blocks = {});

}  // namespace tscope::ops::detail
