// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Fuses a clamp written as two elementwise passes, minimum(maximum(x, low), high) with scalar
/// constant bounds (ONNX's Clip and ReLU6 import that way), into one Clip node: one pass over the
/// data instead of two, and one output buffer. It runs after fuse_conv_clamp, which folds the
/// clamps that follow a blocked convolution into the convolution itself; this rule takes the
/// ones left (after a convolution that could not run blocked, for instance). The operand order
/// must be exactly that one: Clip(x, low, high) computes min(max(x, low), high) with the same NaN
/// behaviour only in that order. The Clip node carries the Minimum node's provenance.
#include "tscope/rewrite/rule.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

/// The local rule fuse_clamps (tracks Minimum).
[[nodiscard]] LocalRule clamp_rule();

}  // namespace tscope::rewrite

#pragma GCC visibility pop
