// SPDX-License-Identifier: Apache-2.0
// The oneDNN path of the float32 Lstm and Gru kernels: oneDNN's RNN primitives, which run a whole
// layer in one call, faster than the BLAS loops' product per step. A cell supplies a DnnlCell (its
// primitive, the oneDNN position of each ONNX gate, how ONNX's Wb and Rb become oneDNN's bias);
// this driver does the rest. W and R are moved into oneDNN's gate order by whole gate blocks
// (nothing is copied when the orders agree) and reordered into the primitive's own layout: on
// every call, or once when they are constants. With several threads and weights that fit a core's
// cache, the batch rows are split between the threads, one primitive call each; a call of too few
// flops to repay waking the threads runs on the calling thread alone. Kept in the node's
// KernelState until the extents or the thread count change.
#pragma once
#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <span>
#include <string_view>

#include "../conv/dnnl_util.h"
#include "recurrent_common.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// The memory descriptors of one primitive: x (steps, rows, input) and y with the whole batch's
/// strides, the states (ldnc), W and R (format any: the primitive picks its packed layout) and the
/// bias (ldgo).
struct DnnlRnnDescs {
  dnnl::rnn_direction direction;
  dnnl::memory::desc x, state, w, r, bias, y;
};

/// How one cell maps onto oneDNN's RNN primitive.
struct DnnlCell {
  CellKind kind;
  /// For each oneDNN gate, in oneDNN's order, the ONNX gate whose W and R rows it takes.
  std::span<const std::int64_t> onnx_gate;
  /// Gates of oneDNN's bias; more than the W and R gates where a cell keeps a bias apart.
  std::int64_t bias_gates;
  /// oneDNN's bias (bias_gates * hidden, ldgo) from ONNX's Wb then Rb (2 * gates * hidden).
  void (*fill_bias)(const float* onnx, std::int64_t hidden, float* out);
  /// The forward-inference primitive descriptor (an LSTM's cell state uses the state descriptor);
  /// throws dnnl::error.
  dnnl::primitive_desc (*describe)(const DnnlRnnDescs& descs, const dnnl::primitive_attr& attr);
  /// Names the descriptor in errors: "an LSTM descriptor".
  std::string_view what;
};

/// Runs a float32 node of `cell` without peepholes or sequence_lens on oneDNN and returns true;
/// returns false (computing nothing) for any other node or when oneDNN has no implementation, and
/// the caller runs the BLAS loops.
[[nodiscard]] bool run_recurrent_dnnl(KernelContext& ctx, const DnnlCell& cell);

}  // namespace tscope::ops::detail
