// SPDX-License-Identifier: Apache-2.0
#pragma once
// The recurrent tests' oracle: ONNX's RNN, GRU and LSTM equations written step by step, one
// scalar at a time, in double, independently of the kernels (no shared code, no products over
// the sequence, no gate buffers).
#include "support/test_util.h"

namespace tscope::testing {

/// Operands in ONNX's per-direction layout; an undefined Tensor is an absent optional input.
struct RecurrentPoint {
  Tensor x;  ///< (steps, batch, input)
  Tensor w;  ///< (gates * hidden, input)
  Tensor r;  ///< (gates * hidden, hidden)
  Tensor bias;
  Tensor initial_h;
  Tensor initial_c;
  Tensor peepholes;
  Tensor sequence_lens;  ///< int64 (batch,): row b runs the steps t < sequence_lens[b]
  bool reverse = false;
};

/// float64 results: y (steps, batch, hidden), last_h, last_c (LSTM).
struct RecurrentExpected {
  Tensor y;
  Tensor last_h;
  Tensor last_c;
};

RecurrentExpected reference_rnn(const RecurrentPoint& p, bool relu);
RecurrentExpected reference_gru(const RecurrentPoint& p, bool linear_before_reset);
RecurrentExpected reference_lstm(const RecurrentPoint& p);

/// Random operands (uniform in [-1, 1), a fixed seed per operand) for the given extents; the
/// optional inputs are present when the flags say so.
RecurrentPoint random_point(DType dtype, int gates, std::int64_t steps, std::int64_t batch,
                            std::int64_t input, std::int64_t hidden, bool bias, bool initial_h,
                            bool initial_c, bool peepholes, std::uint64_t seed);

}  // namespace tscope::testing
