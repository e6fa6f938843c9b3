// SPDX-License-Identifier: Apache-2.0
// ONNX RNN, GRU and LSTM as Tensorscope's recurrent ops: one Rnn / Gru / Lstm node per direction
// (reverse is the op's own setting; bidirectional is two nodes whose outputs are stacked), with
// the per-direction slices of W, R, B, the initial states and the peepholes as operands in ONNX's
// own layout. The profile shows one row per layer direction, and one Grad row when training.
#include <fmt/format.h>

#include "../converter.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/recurrent.h"
#include "tscope/ops/shape.h"

namespace tscope::onnx {
namespace {

using Outputs = std::vector<Variable>;

enum class Cell { Rnn, Gru, Lstm };

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

/// Direction `d` of optional input `index` (its axis 0 is the direction), or undefined.
Variable direction_slice(NodeContext& ctx, int index, std::int64_t d) {
  return ctx.has_input(index) ? subtensor(ctx.input(index), {d}) : Variable();
}

/// One direction of the layer: y (steps, batch, hidden), last_h and (LSTM) last_c.
RecurrentResult convert_direction(NodeContext& ctx, Cell cell, const Variable& x, std::int64_t d,
                                  bool reverse, bool linear_before_reset, const Variable& lengths) {
  const Variable w = subtensor(ctx.input(1), {d});
  const Variable r = subtensor(ctx.input(2), {d});
  const Variable bias = direction_slice(ctx, 3, d);
  const Variable initial_h = direction_slice(ctx, 5, d);
  switch (cell) {
    case Cell::Rnn:
      return rnn(x, w, r, {.bias = bias, .initial_h = initial_h, .reverse = reverse,
                           .sequence_lens = lengths});
    case Cell::Gru:
      return gru(x, w, r, {.bias = bias, .initial_h = initial_h, .reverse = reverse,
                           .linear_before_reset = linear_before_reset, .sequence_lens = lengths});
    case Cell::Lstm:
      return lstm(x, w, r, {.bias = bias, .initial_h = initial_h,
                            .initial_c = direction_slice(ctx, 6, d),
                            .peepholes = direction_slice(ctx, 7, d), .reverse = reverse,
                            .sequence_lens = lengths});
  }
  return {};
}

/// The per-direction values stacked on a new axis `axis` (a new axis of extent 1 for one).
Variable stack_directions(const std::vector<Variable>& values, std::int64_t axis) {
  if (values.size() > 1) return stack(values, axis);
  std::vector<std::int64_t> pattern;
  for (int i = 0; i < values[0].rank(); ++i) pattern.push_back(i);
  pattern.insert(pattern.begin() + axis, kNewAxis);
  return dimshuffle(values[0], pattern);
}

Outputs convert_recurrent(NodeContext& ctx, Cell cell) {
  check_defaults(ctx, cell);
  const bool batch_first = ctx.attribute_int("layout", 0) != 0;
  Variable x = ctx.input(0);
  if (x.rank() != 3) throw_error(ErrorKind::ShapeMismatch, "X must be 3-D, got rank {}", x.rank());
  if (batch_first) x = dimshuffle(x, {1, 0, 2});
  // sequence_lens known at import to cover the whole sequence is left out (no per-row masking).
  Variable lengths;
  if (ctx.has_input(4)) {
    const std::int64_t steps = x.type().dims[0];
    const std::optional<Tensor> constant = ctx.constant_input(4);
    bool full = constant.has_value() && steps != kUnknownDim;
    for (std::int64_t i = 0; full && i < constant->numel(); ++i) full = constant->at(i) == static_cast<double>(steps);
    if (!full) lengths = ctx.input(4);
  }
  const std::int64_t hidden = ctx.required_attribute_int("hidden_size");
  const Dims& r_dims = ctx.input(2).type().dims;
  if (r_dims.rank() == 3 && r_dims[2] != kUnknownDim && r_dims[2] != hidden) {
    throw_error(ErrorKind::ShapeMismatch, "hidden_size is {} but R is {}", hidden, r_dims.to_string());
  }
  const std::string direction = ctx.attribute_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    throw_error(ErrorKind::InvalidArgument, "direction '{}' is not forward, reverse or bidirectional",
                direction);
  }
  const std::int64_t directions = direction == "bidirectional" ? 2 : 1;
  const bool linear_before_reset = cell == Cell::Gru && ctx.attribute_int("linear_before_reset", 0) != 0;

  std::vector<Variable> ys;
  std::vector<Variable> last_h;
  std::vector<Variable> last_c;
  for (std::int64_t d = 0; d < directions; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const RecurrentResult result =
        convert_direction(ctx, cell, x, d, reverse, linear_before_reset, lengths);
    ys.push_back(result.y);
    last_h.push_back(result.last_h);
    last_c.push_back(result.last_c);
  }
  // Y: (steps, directions, batch, hidden); Y_h / Y_c: (directions, batch, hidden).
  Variable y_all = stack_directions(ys, 1);
  Variable y_h = stack_directions(last_h, 0);
  Variable y_c = cell == Cell::Lstm ? stack_directions(last_c, 0) : Variable();
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
