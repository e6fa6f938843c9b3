// SPDX-License-Identifier: Apache-2.0
#pragma once
// Builds the recurrent op under test from a RecurrentPoint: one input Variable per present
// operand (with the operand's exact dims), and the matching step-by-step expectation.
#include <string>
#include <vector>

#include "recurrent_reference.h"
#include "tscope/ops/recurrent.h"

namespace tscope::testing {

enum class CellCase { RnnTanh, RnnRelu, Gru, GruLinearBeforeReset, Lstm };

inline int gates_of(CellCase cell) {
  switch (cell) {
    case CellCase::RnnTanh:
    case CellCase::RnnRelu: return 1;
    case CellCase::Gru:
    case CellCase::GruLinearBeforeReset: return 3;
    case CellCase::Lstm: return 4;
  }
  return 1;
}

inline std::string cell_name(CellCase cell) {
  switch (cell) {
    case CellCase::RnnTanh: return "rnn_tanh";
    case CellCase::RnnRelu: return "rnn_relu";
    case CellCase::Gru: return "gru";
    case CellCase::GruLinearBeforeReset: return "gru_linear_before_reset";
    case CellCase::Lstm: return "lstm";
  }
  return "?";
}

inline const std::vector<CellCase>& all_cells() {
  static const std::vector<CellCase> cells = {CellCase::RnnTanh, CellCase::RnnRelu, CellCase::Gru,
                                              CellCase::GruLinearBeforeReset, CellCase::Lstm};
  return cells;
}

/// The op applied to `operands` (x, w, r, then the present optional ones in point order).
inline RecurrentResult apply_cell(CellCase cell, const std::vector<Variable>& operands,
                                  const RecurrentPoint& p) {
  std::size_t next = 3;
  auto optional = [&](const Tensor& t) { return t.defined() ? operands[next++] : Variable(); };
  const Variable bias = optional(p.bias);
  const Variable initial_h = optional(p.initial_h);
  const Variable initial_c = optional(p.initial_c);
  const Variable peepholes = optional(p.peepholes);
  const Variable lengths = optional(p.sequence_lens);
  const Variable &x = operands[0], &w = operands[1], &r = operands[2];
  switch (cell) {
    case CellCase::RnnTanh:
    case CellCase::RnnRelu:
      return rnn(x, w, r,
                 {.bias = bias, .initial_h = initial_h, .reverse = p.reverse,
                  .activation = cell == CellCase::RnnRelu ? RnnActivation::Relu : RnnActivation::Tanh,
                  .sequence_lens = lengths});
    case CellCase::Gru:
    case CellCase::GruLinearBeforeReset:
      return gru(x, w, r,
                 {.bias = bias, .initial_h = initial_h, .reverse = p.reverse,
                  .linear_before_reset = cell == CellCase::GruLinearBeforeReset,
                  .sequence_lens = lengths});
    case CellCase::Lstm:
      return lstm(x, w, r,
                  {.bias = bias, .initial_h = initial_h, .initial_c = initial_c,
                   .peepholes = peepholes, .reverse = p.reverse, .sequence_lens = lengths});
  }
  return {};
}

/// The present operands of `p`, in input order.
inline std::vector<Tensor> operand_values(const RecurrentPoint& p) {
  std::vector<Tensor> values = {p.x, p.w, p.r};
  for (const Tensor* t : {&p.bias, &p.initial_h, &p.initial_c, &p.peepholes, &p.sequence_lens}) {
    if (t->defined()) values.push_back(*t);
  }
  return values;
}

inline std::vector<Variable> operand_variables(const std::vector<Tensor>& values) {
  std::vector<Variable> variables;
  for (const Tensor& value : values) variables.push_back(tensor(value.dtype(), value.shape()));
  return variables;
}

inline RecurrentExpected expected_for(CellCase cell, const RecurrentPoint& p) {
  switch (cell) {
    case CellCase::RnnTanh: return reference_rnn(p, false);
    case CellCase::RnnRelu: return reference_rnn(p, true);
    case CellCase::Gru: return reference_gru(p, false);
    case CellCase::GruLinearBeforeReset: return reference_gru(p, true);
    case CellCase::Lstm: return reference_lstm(p);
  }
  return {};
}

/// A sample of one cell: extents and which optional operands are present.
struct Shape {
  const char* name;
  std::int64_t steps, batch, input, hidden;
  bool bias, initial_h, initial_c, peepholes, reverse;
  std::vector<std::int64_t> sequence_lens = {};  ///< empty: full length
};

inline RecurrentPoint point_for(CellCase cell, const Shape& s, DType dtype, std::uint64_t seed) {
  const bool lstm_only = cell == CellCase::Lstm;
  RecurrentPoint p = random_point(dtype, gates_of(cell), s.steps, s.batch, s.input, s.hidden,
                                  s.bias, s.initial_h, s.initial_c && lstm_only,
                                  s.peepholes && lstm_only, seed);
  p.reverse = s.reverse;
  if (!s.sequence_lens.empty()) {
    p.sequence_lens = Tensor::from_vector<std::int64_t>({s.batch}, s.sequence_lens);
  }
  return p;
}

}  // namespace tscope::testing
