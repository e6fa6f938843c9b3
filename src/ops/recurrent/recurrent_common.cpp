// SPDX-License-Identifier: Apache-2.0
#include "recurrent_common.h"

#include <fmt/format.h>

#include "tscope/graph/apply.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/registry.h"

namespace tscope::ops::detail {
namespace {

std::string grad_op_name(CellKind cell) { return std::string(cell_op_name(cell)) + "Grad"; }

/// Static extents of one recurrent node, merged from every operand that names them.
struct StaticExtents {
  std::int64_t steps = kUnknownDim;
  std::int64_t batch = kUnknownDim;
  std::int64_t input = kUnknownDim;
};

/// Takes `candidate` into `known` when known is unknown; throws when both are known and differ.
void merge_dim(std::int64_t& known, std::int64_t candidate, std::string_view op,
               std::string_view what, const std::string& operand) {
  if (candidate == kUnknownDim) return;
  if (known != kUnknownDim && known != candidate) {
    throw_error(ErrorKind::ShapeMismatch, "{}: {} is {} but {} has {}", op, what, known, operand,
                candidate);
  }
  known = candidate;
}

void expect_dim(std::int64_t actual, std::int64_t expected, std::string_view op,
                const std::string& operand, const std::string& layout) {
  if (actual != kUnknownDim && expected != kUnknownDim && actual != expected) {
    throw_error(ErrorKind::ShapeMismatch, "{}: {} must be {} with extent {}; got {}", op, operand,
                layout, expected, actual);
  }
}

std::string describe_inputs(std::span<const Variable> inputs) {
  std::string types;
  for (const Variable& input : inputs) types += (types.empty() ? "" : ", ") + input.type().to_string();
  return types;
}

void check_ranks_and_dtype(std::span<const Variable> inputs, const std::vector<int>& ranks,
                           std::string_view op) {
  const DType dtype = inputs[0].dtype();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!is_floating(inputs[i].dtype()) || inputs[i].dtype() != dtype ||
        inputs[i].rank() != ranks[i]) {
      throw_error(ErrorKind::TypeMismatch,
                  "{}: inputs must share one float dtype with ranks ({}); got {}", op,
                  fmt::join(ranks, ", "), describe_inputs(inputs));
    }
  }
}

/// Checks the forward operands (the first layout.forward_inputs of `inputs`) and returns their
/// static extents.
StaticExtents check_forward_operands(std::span<const Variable> inputs, CellKind cell,
                                     const RecurrentLayout& layout, std::int64_t hidden,
                                     std::string_view op) {
  std::vector<int> ranks = {3, 2, 2};
  if (layout.bias >= 0) ranks.push_back(1);
  if (layout.initial_h >= 0) ranks.push_back(2);
  if (layout.initial_c >= 0) ranks.push_back(2);
  if (layout.peepholes >= 0) ranks.push_back(1);
  check_ranks_and_dtype(inputs.subspan(0, ranks.size()), ranks, op);
  if (layout.lengths >= 0) {
    const Type& lengths = inputs[layout.lengths].type();
    if (is_floating(lengths.dtype) || lengths.dtype == DType::Bool || lengths.rank() != 1) {
      throw_error(ErrorKind::TypeMismatch, "{}: sequence_lens must be an integer vector; got {}",
                  op, lengths.to_string());
    }
  }
  const bool known = hidden != kUnknownDim;
  const std::int64_t gated = known ? gate_count(cell) * hidden : kUnknownDim;
  const Dims& x = inputs[0].type().dims;
  const Dims& w = inputs[1].type().dims;
  const Dims& r = inputs[2].type().dims;
  StaticExtents extents{x[0], x[1], x[2]};
  std::int64_t gate_rows = gated;
  merge_dim(gate_rows, w[0], op, "gates * hidden", "w's axis 0");
  merge_dim(gate_rows, r[0], op, "gates * hidden (w's axis 0)", "r's axis 0");
  expect_dim(w[0], gated, op, "w (gates * hidden, input)", "axis 0");
  merge_dim(extents.input, w[1], op, "the input size (x's axis 2)", "w's axis 1");
  expect_dim(r[0], gated, op, "r (gates * hidden, hidden)", "axis 0");
  expect_dim(r[1], hidden, op, "r (gates * hidden, hidden)", "axis 1");
  if (layout.bias >= 0) {
    expect_dim(inputs[layout.bias].type().dims[0], known ? 2 * gated : kUnknownDim, op,
               "bias (Wb then Rb)", "axis 0");
  }
  for (int index : {layout.initial_h, layout.initial_c}) {
    if (index < 0) continue;
    const Dims& state = inputs[index].type().dims;
    const char* name = index == layout.initial_h ? "initial_h" : "initial_c";
    merge_dim(extents.batch, state[0], op, "the batch size (x's axis 1)", std::string(name));
    expect_dim(state[1], hidden, op, std::string(name) + " (batch, hidden)", "axis 1");
  }
  if (layout.peepholes >= 0) {
    expect_dim(inputs[layout.peepholes].type().dims[0], known ? 3 * hidden : kUnknownDim, op,
               "peepholes (i, o, f)", "axis 0");
  }
  if (layout.lengths >= 0) {
    merge_dim(extents.batch, inputs[layout.lengths].type().dims[0], op,
              "the batch size (x's axis 1)", "sequence_lens");
  }
  return extents;
}

void check_kernel(const KernelContext& ctx, bool ok, const std::string& message) {
  if (ok) return;
  Error error(ErrorKind::ShapeMismatch, message);
  if (ctx.node != nullptr) error.add_context("in " + ctx.node->describe());
  throw error;
}

}  // namespace

int gate_count(CellKind cell) {
  switch (cell) {
    case CellKind::Rnn: return 1;
    case CellKind::Gru: return 3;
    case CellKind::Lstm: return 4;
  }
  return 1;
}

const char* cell_op_name(CellKind cell) {
  switch (cell) {
    case CellKind::Rnn: return "Rnn";
    case CellKind::Gru: return "Gru";
    case CellKind::Lstm: return "Lstm";
  }
  return "Rnn";
}

RecurrentLayout recurrent_layout(CellKind cell, const Attrs& attrs) {
  RecurrentLayout layout;
  int next = 3;
  if (attrs.get_bool("bias")) layout.bias = next++;
  if (attrs.get_bool("initial_h")) layout.initial_h = next++;
  if (cell == CellKind::Lstm && attrs.get_bool("initial_c")) layout.initial_c = next++;
  if (cell == CellKind::Lstm && attrs.get_bool("peepholes")) layout.peepholes = next++;
  if (attrs.get_bool_or("sequence_lens", false)) layout.lengths = next++;
  layout.forward_inputs = next;
  layout.y = next++;
  if (attrs.get_bool_or("dy", false)) layout.dy = next++;
  if (attrs.get_bool_or("d_last_h", false)) layout.d_last_h = next++;
  if (cell == CellKind::Lstm && attrs.get_bool_or("d_last_c", false)) layout.d_last_c = next++;
  layout.grad_inputs = next;
  return layout;
}

Attrs recurrent_attrs(std::int64_t hidden, bool reverse, bool bias, bool initial_h, bool initial_c,
                      bool peepholes, bool sequence_lens) {
  Attrs attrs;
  attrs.set("hidden_size", hidden);
  attrs.set("reverse", reverse);
  attrs.set("bias", bias);
  attrs.set("initial_h", initial_h);
  attrs.set("initial_c", initial_c);
  attrs.set("peepholes", peepholes);
  attrs.set("sequence_lens", sequence_lens);
  return attrs;
}

std::int64_t hidden_extent(const Variable& r) {
  return r.rank() == 2 ? r.type().dims[1] : kUnknownDim;
}

std::vector<Type> infer_recurrent(const InferContext& ctx, CellKind cell) {
  const RecurrentLayout layout = recurrent_layout(cell, ctx.attrs);
  const std::string op = cell_op_name(cell);
  if (ctx.num_inputs() != layout.forward_inputs) {
    throw_error(ErrorKind::InvalidArgument,
                "{}: expected {} inputs (x, w, r and the optional ones its attrs name); got {}",
                op, layout.forward_inputs, ctx.num_inputs());
  }
  const std::int64_t hidden = ctx.attrs.get_int("hidden_size");
  const StaticExtents n = check_forward_operands(ctx.inputs, cell, layout, hidden, op);
  const DType dtype = ctx.input_type(0).dtype;
  const Type state{dtype, Dims{n.batch, hidden}};
  std::vector<Type> types = {Type{dtype, Dims{n.steps, n.batch, hidden}}, state};
  if (cell == CellKind::Lstm) types.push_back(state);
  return types;
}

std::vector<Type> infer_recurrent_grad(const InferContext& ctx, CellKind cell) {
  const RecurrentLayout layout = recurrent_layout(cell, ctx.attrs);
  const std::string op = grad_op_name(cell);
  if (ctx.num_inputs() != layout.grad_inputs) {
    throw_error(ErrorKind::InvalidArgument,
                "{}: expected {} inputs (the forward inputs, y and the output gradients its "
                "attrs name); got {}",
                op, layout.grad_inputs, ctx.num_inputs());
  }
  const std::int64_t hidden = ctx.attrs.get_int("hidden_size");
  StaticExtents n = check_forward_operands(ctx.inputs, cell, layout, hidden, op);
  const DType dtype = ctx.input_type(0).dtype;
  for (int index : {layout.y, layout.dy, layout.d_last_h, layout.d_last_c}) {
    if (index < 0) continue;
    const Type& type = ctx.input_type(index);
    const bool sequence = index == layout.y || index == layout.dy;
    const std::string name = index == layout.y    ? "y"
                             : index == layout.dy ? "dy"
                             : index == layout.d_last_h ? "d_last_h"
                                                        : "d_last_c";
    if (type.dtype != dtype || type.rank() != (sequence ? 3 : 2)) {
      throw_error(ErrorKind::TypeMismatch, "{}: {} must be a {} tensor of rank {}; got {}", op,
                  name, dtype_name(dtype), sequence ? 3 : 2, type.to_string());
    }
    if (sequence) merge_dim(n.steps, type.dims[0], op, "the sequence length", name);
    merge_dim(n.batch, type.dims[sequence ? 1 : 0], op, "the batch size", name);
    expect_dim(type.dims[sequence ? 2 : 1], hidden, op, name, "its last axis");
  }
  std::vector<Type> types;
  for (int i = 0; i < layout.forward_inputs; ++i) {
    if (i != layout.lengths) types.push_back(ctx.input_type(i));
  }
  return types;
}

std::vector<Variable> pullback_recurrent(const PullbackContext& ctx, CellKind cell) {
  const DType dtype = ctx.inputs[0].dtype();
  std::vector<Variable> inputs(ctx.inputs.begin(), ctx.inputs.end());
  inputs.push_back(ctx.outputs[0]);
  Attrs attrs = ctx.attrs;
  auto add_output_grad = [&](std::size_t output, const char* key) {
    const bool present = output < ctx.output_grads.size() && ctx.output_grads[output].defined();
    attrs.set(key, present);
    if (!present) return;
    const Variable& g = ctx.output_grads[output];
    inputs.push_back(g.dtype() == dtype ? g : cast(g, dtype));
  };
  add_output_grad(0, "dy");
  add_output_grad(1, "d_last_h");
  if (cell == CellKind::Lstm) add_output_grad(2, "d_last_c");
  const int lengths = recurrent_layout(cell, ctx.attrs).lengths;
  std::vector<Variable> grads = apply_op(op_def(grad_op_name(cell)), std::move(inputs),
                                         std::move(attrs), std::source_location::current());
  if (lengths >= 0) grads.insert(grads.begin() + lengths, Variable());  // integer: no gradient
  return grads;
}

Cost recurrent_cost(const CostContext& ctx, CellKind cell, bool gradient) {
  const Dims& x = ctx.input_shapes[0];
  const double rows = static_cast<double>(x[0] * x[1]);  // steps * batch
  const double input = static_cast<double>(x[2]);
  const double hidden = static_cast<double>(ctx.input_shapes[2][1]);  // r (gates * hidden, hidden)
  const double gated = gate_count(cell) * hidden;
  // Input projection and recurrence products; per hidden unit and step the gate arithmetic
  // (activations counted as one flop each).
  const double products = 2.0 * rows * gated * (input + hidden);
  const double per_unit = cell == CellKind::Rnn ? 3.0 : cell == CellKind::Gru ? 12.0 : 14.0;
  const double elementwise = rows * hidden * per_unit;
  // The gradient recomputes the gates from y (one product pass) and runs three more: the
  // recurrence's and the x, w and r gradients.
  const double flops = gradient ? 3.0 * products + 3.0 * elementwise : products + elementwise;
  double elements = 0;
  for (const Dims& shape : ctx.input_shapes) elements += static_cast<double>(shape.product());
  for (const Dims& shape : ctx.output_shapes) elements += static_cast<double>(shape.product());
  return Cost{flops, elements * static_cast<double>(dtype_size(ctx.input_dtypes[0]))};
}

std::string recurrent_printed_name(CellKind cell, bool gradient, const Attrs& attrs) {
  std::string extras;
  if (cell == CellKind::Rnn) extras = "," + attrs.get_string("activation");
  if (cell == CellKind::Gru && attrs.get_bool("linear_before_reset")) {
    extras = ",linear_before_reset";
  }
  if (cell == CellKind::Lstm && attrs.get_bool("peepholes")) extras = ",peepholes";
  if (attrs.get_bool_or("sequence_lens", false)) extras += ",sequence_lens";
  const std::int64_t hidden = attrs.get_int("hidden_size");
  return fmt::format("{}{}{{hidden={},{}{}}}", cell_op_name(cell), gradient ? "Grad" : "",
                     hidden == kUnknownDim ? "?" : std::to_string(hidden),
                     attrs.get_bool("reverse") ? "reverse" : "forward", extras);
}

std::vector<Variable> apply_recurrent(CellKind cell, std::vector<Variable> inputs, Attrs attrs,
                                      const std::source_location& location) {
  return apply_op(op_def(cell_op_name(cell)), std::move(inputs), std::move(attrs), location);
}

RecurrentExtents kernel_extents(const KernelContext& ctx, CellKind cell,
                                const RecurrentLayout& layout) {
  const Dims& x = ctx.input(0).shape();
  RecurrentExtents n{x[0], x[1], x[2], ctx.input(2).shape()[1]};
  const std::int64_t gated = gate_count(cell) * n.hidden;
  const std::string op = ctx.node != nullptr ? ctx.node->op().printed_name(*ctx.attrs) : "recurrent";
  const std::int64_t hidden = ctx.attrs->get_int("hidden_size");
  check_kernel(ctx, hidden == kUnknownDim || hidden == n.hidden,
               fmt::format("{}: r has hidden extent {}; the node was built for {}", op, n.hidden,
                           hidden));
  auto shape_of = [&](int index) { return ctx.input(index).shape(); };
  auto expect = [&](int index, const Dims& expected, const char* name) {
    if (index < 0) return;
    check_kernel(ctx, shape_of(index) == expected,
                 fmt::format("{}: {} must have shape {} for x of shape {}; got {}", op, name,
                             expected.to_string(), x.to_string(), shape_of(index).to_string()));
  };
  expect(1, Dims{gated, n.input}, "w");
  expect(2, Dims{gated, n.hidden}, "r");
  expect(layout.bias, Dims{2 * gated}, "bias");
  expect(layout.initial_h, Dims{n.batch, n.hidden}, "initial_h");
  expect(layout.initial_c, Dims{n.batch, n.hidden}, "initial_c");
  expect(layout.peepholes, Dims{3 * n.hidden}, "peepholes");
  expect(layout.lengths, Dims{n.batch}, "sequence_lens");
  if (layout.lengths >= 0) {
    const Tensor& lengths = ctx.input(layout.lengths);
    for (std::int64_t b = 0; b < lengths.numel(); ++b) {
      const double length = lengths.at(b);
      check_kernel(ctx, length >= 0 && length <= static_cast<double>(n.steps),
                   fmt::format("{}: sequence_lens[{}] = {} is outside [0, {}]", op, b, length,
                               n.steps));
    }
  }
  if (ctx.num_inputs > layout.forward_inputs) {
    expect(layout.y, Dims{n.steps, n.batch, n.hidden}, "y");
    expect(layout.dy, Dims{n.steps, n.batch, n.hidden}, "dy");
    expect(layout.d_last_h, Dims{n.batch, n.hidden}, "d_last_h");
    expect(layout.d_last_c, Dims{n.batch, n.hidden}, "d_last_c");
  }
  return n;
}

}  // namespace tscope::ops::detail
