// SPDX-License-Identifier: Apache-2.0
// Lstm's oneDNN path: oneDNN's LSTM primitive, whose packed-weight products beat one BLAS call
// per step. ONNX's gate order (i, o, f, c) becomes oneDNN's (i, f, c, o) by moving whole gate
// blocks; the two bias vectors are summed. Weights are packed on every call, or once when they
// are constants. With several threads and weights that fit a core's cache, the batch rows are
// split between the threads, one primitive call each. Kept in the node's KernelState until the
// extents or the thread count change.
#pragma once
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// Runs a float32 Lstm node without peepholes or sequence_lens on oneDNN and returns true; returns
/// false (computing nothing) for any other node or when oneDNN has no implementation, and the
/// caller runs the BLAS loops.
[[nodiscard]] bool run_lstm_dnnl(KernelContext& ctx);

/// The fast kernel's library for a node, as the profile shows it: "dnnl" for float32 without
/// peepholes or sequence_lens, "blas" for the loops that run the rest.
[[nodiscard]] std::string_view lstm_fast_label(std::span<const Variable> inputs, const Attrs& attrs);

}  // namespace tscope::ops::detail
