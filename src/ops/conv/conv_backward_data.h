// SPDX-License-Identifier: Apache-2.0
// The backward-data convolution (x's gradient from w and dy) as kernels over a resolved geometry,
// shared by ConvGradI and ConvTranspose, which differ only in where x's shape comes from.
#pragma once
#include "conv_geometry.h"
#include "tscope/core/tensor.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// Output 0 = the gradient with respect to the convolution input (geometry.input_shape()).
void conv_backward_data_reference(KernelContext& ctx, const ConvGeometry& geometry,
                                  const Tensor& w, const Tensor& dy);
/// The same through oneDNN (float32); runs the reference loops for empty tensors or shapes oneDNN
/// does not implement.
void conv_backward_data_dnnl(KernelContext& ctx, const ConvGeometry& geometry, const Tensor& w,
                             const Tensor& dy);

}  // namespace tscope::ops::detail
