// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Drops the kernel taps of a convolution that never meet its input. A tap that, at every output
/// position, lands in the zero padding only multiplies zeros; a 7x7 depthwise kernel with pads 3
/// over a 2x2 feature map (the last stage of a network fed small images) has 40 such taps of 49.
/// The rule slices the constant weights to the taps that do meet the input and shrinks the pads by
/// the taps cut at each end, so every output reads the same input values with the same weights:
/// the results are exact. It also keeps oneDNN off its reference implementation, which it falls
/// back to for a depthwise kernel wider than its padded input can feed. Only convolutions with
/// constant weights, explicit pads and known spatial extents are rewritten; the new node carries
/// the old one's provenance.
#include "tscope/rewrite/rule.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

/// The local rule crop_idle_kernel_taps (tracks Conv).
[[nodiscard]] LocalRule kernel_tap_rule();

}  // namespace tscope::rewrite

#pragma GCC visibility pop
