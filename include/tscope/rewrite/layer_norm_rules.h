// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Recognises a layer normalisation written out in plain ops, as ONNX exports before opset 17
/// spell it, and replaces it with one LayerNorm node:
///
///   m = mean(x, axes, keepdims)      c = x - m
///   v = mean(sqr(c), axes, keepdims) (or pow(c, 2), or c * c)
///   n = c / sqrt(v + eps)            (or c * reciprocal(sqrt(v + eps)), either operand order)
///   y = n * gamma + beta             (gamma and beta optional, either operand order)
///
/// with `axes` the trailing axes of x from some axis on and eps a scalar constant. The rule
/// fires only when every intermediate (m, c, v, the square, the shifted variance, its root) is
/// read by the pattern alone, and when gamma and beta have x's dtype and broadcast over the
/// normalised axes only; the product and the sum are folded one at a time, into a LayerNorm
/// that has neither parameter yet (for gamma) or no beta yet (for beta). It runs before
/// fuse_elementwise, which would otherwise fold the pieces into Composites around the two means.
/// LayerNorm accumulates the statistics in double and multiplies by the reciprocal of the root
/// instead of dividing, so float32 results differ from the plain ops' by rounding. Each new node
/// carries the provenance of the node it replaces (the outermost of the pattern at the end).
#include "tscope/rewrite/rule.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

/// The local rule fuse_layer_norms (tracks TrueDiv, Mul and Add).
[[nodiscard]] LocalRule layer_norm_rule();

}  // namespace tscope::rewrite

#pragma GCC visibility pop
