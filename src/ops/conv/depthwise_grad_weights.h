// SPDX-License-Identifier: Apache-2.0
// The weight gradient of a 2-D depthwise convolution by direct loops. oneDNN 2.6 has a direct
// depthwise backward-weights kernel for 3x3 windows only; larger ones (MobileNet v3's and
// EfficientNet's 5x5, ConvNeXt's 7x7) it runs as im2col and a gemm of one-channel groups, which
// is many times slower than the loops below.
#pragma once
#include "conv_geometry.h"

namespace tscope::ops::detail {

/// Whether depthwise_grad_weights_2d computes the weight gradient of a convolution of `channels`
/// input channels, `groups` groups and weights of shape `w`: 2-D, one group per channel and one
/// output channel per group, a window larger than 3x3 (oneDNN's kernel takes the rest).
[[nodiscard]] bool uses_depthwise_grad_weights_2d(std::int64_t channels, std::int64_t groups,
                                                  const Dims& w);

/// dw (channels, 1, kh, kw) from contiguous NCHW float32 x and dy: per channel and tap, the sum
/// over the batch and the output positions of dy times the input element the tap reads. Each
/// channel's planes stay in cache across its taps; channels are split between the threads.
void depthwise_grad_weights_2d(const ConvGeometry& g, const float* x, const float* dy, float* dw);

}  // namespace tscope::ops::detail
