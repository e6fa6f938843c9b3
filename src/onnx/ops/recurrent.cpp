// SPDX-License-Identifier: Apache-2.0
// ONNX RNN, GRU and LSTM, unrolled over the (static) sequence length into matrix products and
// elementwise ops: correct and fully profiled node by node, though a dedicated recurrent op would
// dispatch far fewer nodes. The input projection of every step is one product up front.
#include <fmt/format.h>

#include "../converter.h"
#include "shape_builder.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/shape.h"

namespace tscope::onnx {
namespace {

using Outputs = std::vector<Variable>;

enum class Cell { Rnn, Gru, Lstm };

int gate_count(Cell cell) {
  switch (cell) {
    case Cell::Rnn: return 1;
    case Cell::Gru: return 3;
    case Cell::Lstm: return 4;
  }
  return 1;
}

/// Columns [index * hidden, (index + 1) * hidden) of a (batch, gates * hidden) matrix.
Variable gate(const Variable& gates, std::int64_t index, std::int64_t hidden) {
  return subtensor(gates, {slice(), slice(index * hidden, (index + 1) * hidden)});
}

/// Rows [index * hidden, (index + 1) * hidden) of a vector.
Variable part(const Variable& vector, std::int64_t index, std::int64_t hidden) {
  return subtensor(vector, {slice(index * hidden, (index + 1) * hidden)});
}

struct Direction {
  Variable input_projection;  // (steps, batch, gates * hidden): X W^T + Wb (+ Rb but for GRU)
  Variable recurrence;        // (hidden, gates * hidden): R^T
  Variable recurrence_bias;   // GRU: (gates * hidden,) Rb, kept apart for the reset gate
  Variable initial_h;         // (batch, hidden)
  Variable initial_c;         // LSTM
  Variable peephole;          // LSTM, (3 * hidden,) or undefined
};

void check_defaults(NodeContext& ctx, Cell cell) {
  if (ctx.has_attribute("activations")) {
    ctx.ignore_attribute("activations");
    ctx.unsupported("custom activations");
  }
  ctx.ignore_attribute("activation_alpha");
  ctx.ignore_attribute("activation_beta");
  if (ctx.has_attribute("clip")) {
    ctx.ignore_attribute("clip");
    ctx.unsupported("cell clipping");
  }
  if (cell == Cell::Lstm && ctx.attribute_int("input_forget", 0) != 0) {
    ctx.unsupported("input_forget=1");
  }
}

Outputs convert_recurrent(NodeContext& ctx, Cell cell) {
  check_defaults(ctx, cell);
  const bool batch_first = ctx.attribute_int("layout", 0) != 0;
  Variable x = ctx.input(0);
  if (x.rank() != 3) throw_error(ErrorKind::ShapeMismatch, "X must be 3-D, got rank {}", x.rank());
  if (batch_first) x = dimshuffle(x, {1, 0, 2});
  const std::int64_t steps = x.type().dims[0];
  if (steps == kUnknownDim) ctx.unsupported("a recurrent op over a sequence of unknown length");
  if (ctx.has_input(4)) {
    const std::optional<Tensor> lengths = ctx.constant_input(4);
    bool full = lengths.has_value();
    for (std::int64_t i = 0; full && i < lengths->numel(); ++i) full = lengths->at(i) == static_cast<double>(steps);
    if (!full) ctx.unsupported("sequence_lens shorter than the sequence");
  }
  const std::int64_t hidden = ctx.required_attribute_int("hidden_size");
  const std::string direction = ctx.attribute_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    throw_error(ErrorKind::InvalidArgument, "direction '{}' is not forward, reverse or bidirectional",
                direction);
  }
  const std::int64_t directions = direction == "bidirectional" ? 2 : 1;
  const bool linear_before_reset = cell == Cell::Gru && ctx.attribute_int("linear_before_reset", 0) != 0;
  const std::int64_t gates = gate_count(cell);
  const Variable& w = ctx.input(1);
  const Variable& r = ctx.input(2);
  const DType dtype = x.dtype();

  ShapeBuilder flat_rows;
  flat_rows.add_product_of(x, 0, 2);
  flat_rows.add_axis_of(x, 2);
  const Variable x_rows = flat_rows.reshape(x);

  std::vector<std::vector<Variable>> ys(static_cast<std::size_t>(directions));
  std::vector<Variable> last_h;
  std::vector<Variable> last_c;
  for (std::int64_t d = 0; d < directions; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    Direction dir;
    const Variable w_d = subtensor(w, {d});
    Variable projection = dot(x_rows, transpose(w_d));
    if (ctx.has_input(3)) {
      const Variable b_d = subtensor(ctx.input(3), {d});
      const Variable input_bias = subtensor(b_d, {slice(0, gates * hidden)});
      const Variable recurrence_bias = subtensor(b_d, {slice(gates * hidden, 2 * gates * hidden)});
      // GRU's candidate gate applies the reset gate to Rb, so only GRU keeps Rb apart.
      if (cell == Cell::Gru) {
        projection = projection + input_bias;
        dir.recurrence_bias = recurrence_bias;
      } else {
        projection = projection + (input_bias + recurrence_bias);
      }
    }
    ShapeBuilder unflat;
    unflat.add(steps);
    unflat.add_axis_of(x, 1);
    unflat.add(gates * hidden);
    dir.input_projection = unflat.reshape(projection);
    dir.recurrence = transpose(subtensor(r, {d}));
    if (ctx.has_input(5)) {
      dir.initial_h = subtensor(ctx.input(5), {d});
    } else {
      std::vector<DimArg> dims;
      if (x.type().dims[1] != kUnknownDim) {
        dims.emplace_back(x.type().dims[1]);
      } else {
        dims.emplace_back(shape_i(x, 1));
      }
      dims.emplace_back(hidden);
      dir.initial_h = zeros(dims, dtype);
      dir.initial_c = dir.initial_h;
    }
    if (cell == Cell::Lstm) {
      if (ctx.has_input(6)) dir.initial_c = subtensor(ctx.input(6), {d});
      if (ctx.has_input(7)) dir.peephole = subtensor(ctx.input(7), {d});
      if (!dir.initial_c.defined()) dir.initial_c = zeros_like(dir.initial_h);
    }
    Variable h = dir.initial_h;
    Variable c = dir.initial_c;
    std::vector<Variable>& y = ys[static_cast<std::size_t>(d)];
    y.resize(static_cast<std::size_t>(steps));
    for (std::int64_t i = 0; i < steps; ++i) {
      const std::int64_t t = reverse ? steps - 1 - i : i;
      const Variable xw = subtensor(dir.input_projection, {t});  // (batch, gates * hidden)
      Variable hr = dot(h, dir.recurrence);
      if (cell == Cell::Rnn) {
        h = tanh(xw + hr);
      } else if (cell == Cell::Gru) {
        // Gate order z, r, h.
        const Variable& rb = dir.recurrence_bias;
        auto recurrent_part = [&](std::int64_t index) {
          Variable value = gate(hr, index, hidden);
          return rb.defined() ? value + part(rb, index, hidden) : value;
        };
        const Variable z = sigmoid(gate(xw, 0, hidden) + recurrent_part(0));
        const Variable reset = sigmoid(gate(xw, 1, hidden) + recurrent_part(1));
        Variable candidate_input;
        if (linear_before_reset) {
          candidate_input = gate(xw, 2, hidden) + reset * recurrent_part(2);
        } else {
          // (r (.) H) Rh^T: the columns of R^T that belong to the candidate gate.
          Variable reset_h = dot(reset * h, subtensor(dir.recurrence, {slice(), slice(2 * hidden, 3 * hidden)}));
          if (rb.defined()) reset_h = reset_h + part(rb, 2, hidden);
          candidate_input = gate(xw, 2, hidden) + reset_h;
        }
        const Variable candidate = tanh(candidate_input);
        h = (-z + 1.0) * candidate + z * h;
      } else {
        // Gate order i, o, f, c.
        const Variable all = xw + hr;
        Variable in = gate(all, 0, hidden);
        Variable forget = gate(all, 2, hidden);
        if (dir.peephole.defined()) {
          in = in + part(dir.peephole, 0, hidden) * c;
          forget = forget + part(dir.peephole, 2, hidden) * c;
        }
        const Variable cell_input = tanh(gate(all, 3, hidden));
        c = sigmoid(forget) * c + sigmoid(in) * cell_input;
        Variable out = gate(all, 1, hidden);
        if (dir.peephole.defined()) out = out + part(dir.peephole, 1, hidden) * c;
        h = sigmoid(out) * tanh(c);
      }
      y[static_cast<std::size_t>(t)] = h;
    }
    last_h.push_back(h);
    last_c.push_back(c);
  }
  // Y: (steps, directions, batch, hidden); Y_h / Y_c: (directions, batch, hidden).
  std::vector<Variable> per_step;
  for (std::int64_t t = 0; t < steps; ++t) {
    std::vector<Variable> at_t;
    for (std::int64_t d = 0; d < directions; ++d) at_t.push_back(ys[static_cast<std::size_t>(d)][static_cast<std::size_t>(t)]);
    per_step.push_back(stack(at_t, 0));
  }
  Variable y_all = stack(per_step, 0);
  Variable y_h = stack(last_h, 0);
  Variable y_c = cell == Cell::Lstm ? stack(last_c, 0) : Variable();
  if (batch_first) {
    y_all = dimshuffle(y_all, {2, 0, 1, 3});  // (batch, steps, directions, hidden)
    y_h = dimshuffle(y_h, {1, 0, 2});
    if (y_c.defined()) y_c = dimshuffle(y_c, {1, 0, 2});
  }
  Outputs outputs = {y_all, y_h};
  if (cell == Cell::Lstm) outputs.push_back(y_c);
  return outputs;
}

Outputs convert_rnn(NodeContext& ctx) { return convert_recurrent(ctx, Cell::Rnn); }
Outputs convert_gru(NodeContext& ctx) { return convert_recurrent(ctx, Cell::Gru); }
Outputs convert_lstm(NodeContext& ctx) { return convert_recurrent(ctx, Cell::Lstm); }

}  // namespace

void register_recurrent_converters(ConverterTable& table) {
  table.add("GRU", 7, convert_gru);
  table.add("LSTM", 7, convert_lstm);
  table.add("RNN", 7, convert_rnn);
}

}  // namespace tscope::onnx
