// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Average-pools before a pointwise convolution instead of after it. A 1x1 convolution with
/// strides 1, no padding and no bias applies the same linear map to every pixel (and maps a zero
/// pixel to zero), and an average pool takes the same weighted sum of pixels in every channel
/// (its divisor, padding and ceil mode included), so the two commute:
/// pool(conv(x)) = conv(pool(x)). Where the pool shrinks the image, the convolution then runs on
/// fewer pixels: DenseNet's transition layers (1x1 convolution, 2x2 average pool with stride 2)
/// do a quarter of the multiplications. The results agree up to float rounding. Only a
/// convolution whose output nothing else reads, and only where the pool's output has fewer pixels
/// than its input (static extents), is rewritten; the new nodes keep the provenance of the nodes
/// they stand for.
#include "tscope/rewrite/rule.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

/// The local rule pool_before_pointwise_conv (tracks AveragePool).
[[nodiscard]] LocalRule pointwise_pool_rule();

}  // namespace tscope::rewrite

#pragma GCC visibility pop
