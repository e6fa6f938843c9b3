// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Recurrent layers as single ops: Rnn, Gru and Lstm run one direction of one layer over a whole
/// sequence in one node, with ONNX's weight layout and gate order. Their gradients are one node
/// each too (RnnGrad, GruGrad, LstmGrad: backpropagation through time).
///
///   Variable x = tensor3(DType::Float32, "x");           // (steps, batch, input)
///   Variable w = shared(w_init, "w");                      // (4 * hidden, input), gates i, o, f, c
///   Variable r = shared(r_init, "r");                      // (4 * hidden, hidden)
///   RecurrentResult out = lstm(x, w, r, {.bias = b});      // out.y: (steps, batch, hidden)
///   Variable loss = mean(sqr(out.last_h - target));
///   auto [gw, gr] = grad(loss, {w, r});                    // one LstmGrad node
///
/// Bidirectional layers are two ops (one with `reverse`) whose outputs the caller stacks. The
/// gradient ops are not differentiable again (second-order gradients of recurrent ops throw
/// NotDifferentiable).
#include <cstdint>
#include <source_location>

#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

/// What a recurrent op returns. `last_c` is defined for lstm() only.
struct RecurrentResult {
  Variable y;       ///< (steps, batch, hidden): the hidden state after each step, in input order
  Variable last_h;  ///< (batch, hidden): the state after the last step processed
  Variable last_c;  ///< (batch, hidden): LSTM's cell state after the last step processed
};

enum class RnnActivation { Tanh, Relu };

/// Optional inputs and settings of rnn(); undefined Variables are absent (zero).
struct RnnOptions {
  Variable bias;       ///< (2 * hidden,): Wb then Rb
  Variable initial_h;  ///< (batch, hidden)
  bool reverse = false;  ///< process the sequence from its last step to its first
  RnnActivation activation = RnnActivation::Tanh;
  /// (batch,) integers in [0, steps]: row b runs steps t < sequence_lens[b] (in the direction's
  /// order), keeps its state through the others and has y = 0 there (ONNX sequence_lens).
  Variable sequence_lens;
};

/// Optional inputs and settings of gru().
struct GruOptions {
  Variable bias;       ///< (6 * hidden,): Wb (z, r, h) then Rb (z, r, h)
  Variable initial_h;  ///< (batch, hidden)
  bool reverse = false;
  /// ONNX linear_before_reset: the reset gate multiplies (h Rh^T + Rbh) instead of h.
  bool linear_before_reset = false;
  /// (batch,) integers in [0, steps]: row b runs steps t < sequence_lens[b] (in the direction's
  /// order), keeps its state through the others and has y = 0 there (ONNX sequence_lens).
  Variable sequence_lens;
};

/// Optional inputs and settings of lstm().
struct LstmOptions {
  Variable bias;       ///< (8 * hidden,): Wb (i, o, f, c) then Rb (i, o, f, c)
  Variable initial_h;  ///< (batch, hidden)
  Variable initial_c;  ///< (batch, hidden)
  Variable peepholes;  ///< (3 * hidden,): P (i, o, f)
  bool reverse = false;
  /// (batch,) integers in [0, steps]: row b runs steps t < sequence_lens[b] (in the direction's
  /// order), keeps its state through the others and has y = 0 there (ONNX sequence_lens).
  Variable sequence_lens;
};

/// Elman RNN: h_t = f(x_t W^T + h_{t-1} R^T + Wb + Rb), f = tanh or relu. x (steps, batch, input),
/// w (hidden, input), r (hidden, hidden). Throws TypeMismatch for ranks other than those listed or
/// inputs of different float dtypes, ShapeMismatch for static extents that disagree. The hidden
/// extent is r's axis 1; when it is not known statically, the outputs' last axis is unknown too.
RecurrentResult rnn(const Variable& x, const Variable& w, const Variable& r,
                    const RnnOptions& options = {},
                    const std::source_location& location = std::source_location::current());

/// GRU with ONNX's equations and gate order (z, r, h): w (3 * hidden, input), r (3 * hidden,
/// hidden). Throws like rnn().
RecurrentResult gru(const Variable& x, const Variable& w, const Variable& r,
                    const GruOptions& options = {},
                    const std::source_location& location = std::source_location::current());

/// LSTM with ONNX's equations and gate order (i, o, f, c), optional peepholes: w (4 * hidden,
/// input), r (4 * hidden, hidden). Throws like rnn().
RecurrentResult lstm(const Variable& x, const Variable& w, const Variable& r,
                     const LstmOptions& options = {},
                     const std::source_location& location = std::source_location::current());

namespace ops::detail {
/// How many threads the float32 Lstm and Gru kernels (oneDNN) split a batch between at `threads`
/// threads, for a cell of `gates` gates (Lstm 4, Gru 3) over `steps` steps: 1 runs it whole, on
/// oneDNN's own threading, or on the calling thread alone when the call is too small to repay
/// waking the others. Public so that a test can tell a split run from a serial one.
[[nodiscard]] int recurrent_batch_parts(int gates,
                                        std::int64_t steps,
                                        std::int64_t batch,
                                        std::int64_t input,
                                        std::int64_t hidden,
                                        int threads);
}  // namespace ops::detail

}  // namespace tscope

#pragma GCC visibility pop
