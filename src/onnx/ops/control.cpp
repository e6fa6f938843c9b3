// SPDX-License-Identifier: Apache-2.0
// ONNX control flow: Loop and Scan become one Scan node (tscope/runtime/scan.h) whose body is the
// ONNX body converted by the importer itself; If evaluates both branches and selects elementwise.
// Bodies read values of the enclosing graphs directly; scan() captures them as non-sequences.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "../converter.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/shape.h"
#include "tscope/runtime/scan.h"

namespace tscope::onnx {
namespace {

using Outputs = std::vector<Variable>;

// Names the loop in profiles: the node's name, else its first output's, so unnamed loops differ.
std::string node_label(const NodeContext& ctx) {
  if (!ctx.node().name().empty()) return ctx.node().name();
  if (ctx.num_outputs() > 0 && !ctx.node().output(0).empty()) return ctx.node().output(0);
  return std::string(ctx.op_type());
}

// ONNX conditions and trip counts are scalars, or one-element tensors from some exporters.
Variable as_scalar(const Variable& value, std::string_view what) {
  if (value.rank() == 0) return value;
  const Dims& dims = value.type().dims;
  if (std::all_of(dims.begin(), dims.end(), [](std::int64_t extent) { return extent == 1; })) {
    return reshape(value, std::vector<std::int64_t>{});
  }
  throw_error(ErrorKind::ShapeMismatch, "{} must hold one element; it is {}", what,
              value.type().to_string());
}

Variable as_bool_scalar(const Variable& value, std::string_view what) {
  const Variable scalar = as_scalar(value, what);
  return scalar.dtype() == DType::Bool ? scalar : neq(scalar, 0);
}

Variable int64_constant(std::int64_t value, std::string name) {
  return constant(Tensor::from_vector<std::int64_t>(Dims{}, {value}), std::move(name));
}


// The truth of a condition input known at import (a constant or an initializer).
std::optional<bool> known_truth(const NodeContext& ctx, int index) {
  const std::optional<Tensor> value = ctx.constant_input(index);
  if (!value.has_value() || value->numel() != 1) return std::nullopt;
  return value->at(0) != 0;
}

// The value a loop-carried state holds after the loop: the last row of its stack, or its initial
// value when no step ran. Unless a step surely ran, the stack's last 0 or 1 rows go after the
// initial value and the last of those 1 or 2 rows is the answer, which copies one row, not the
// stack.
Variable final_state(const Variable& stacked, const Variable& initial, bool runs_a_step) {
  if (runs_a_step) return subtensor(stacked, {-1});
  std::vector<std::int64_t> pattern{kNewAxis};
  for (int axis = 0; axis < initial.rank(); ++axis) pattern.push_back(axis);
  const Variable candidates =
      join(0, {dimshuffle(initial, pattern), subtensor(stacked, {slice(-1, none)})});
  return subtensor(candidates, {-1});
}

// A scan whose type or shape check fails names the scan; say which ONNX value it is about.
template <typename Build>
ScanResult build_loop(Build&& build, std::string_view what) {
  try {
    return build();
  } catch (Error& error) {
    if (error.kind() == ErrorKind::TypeMismatch || error.kind() == ErrorKind::ShapeMismatch) {
      error.add_context(
          fmt::format("{} must keep their dtype and shape from one iteration to the next", what));
    }
    throw;
  }
}

// ---- Loop ---------------------------------------------------------------------------------------

// True when the body's condition output is certainly true whenever the body runs: the body then
// never stops the loop, which is a counted loop with a known row count. The incoming condition is
// true inside the body (the loop only runs the body while it holds), so passing it through counts.
bool condition_stays_true(const ::onnx::GraphProto& body) {
  if (body.input_size() < 2 || body.output_size() < 1) return false;
  const std::string& condition_in = body.input(1).name();
  std::string name = body.output(0).name();
  for (int index = body.node_size() - 1; index >= 0; --index) {
    const ::onnx::NodeProto& node = body.node(index);
    if (node.output_size() < 1 || node.output(0) != name) continue;
    if (node.op_type() != "Identity" || node.input_size() != 1) return false;
    name = node.input(0);
  }
  return name == condition_in;
}

Outputs convert_loop(NodeContext& ctx) {
  const std::string label = node_label(ctx);
  const bool has_trip_count = ctx.has_input(0);
  const bool has_condition = ctx.has_input(1);
  const ::onnx::GraphProto& body = ctx.attribute_graph("body");
  if (!has_trip_count && (!has_condition || condition_stays_true(body))) {
    ctx.unsupported(
        "a Loop with no trip count M and no condition that can stop it (it would never end)");
  }
  const std::vector<Variable> initial = ctx.inputs_from(2);
  const int carried = static_cast<int>(initial.size());
  if (body.input_size() != 2 + carried || body.output_size() < 1 + carried) {
    throw_error(ErrorKind::InvalidArgument,
                "Loop: the body has {} inputs and {} outputs for {} loop-carried values; "
                "expected {} inputs (iteration, condition, carried) and at least {} outputs",
                body.input_size(), body.output_size(), carried, 2 + carried, 1 + carried);
  }
  const int scanned = body.output_size() - 1 - carried;

  // Without M the condition alone bounds the loop; the loop op's while loops grow their stacks as
  // steps run, so the largest count reserves no memory.
  const std::optional<Tensor> known_trip_count =
      has_trip_count ? ctx.constant_input(0)
                     : std::optional<Tensor>(Tensor::from_vector<std::int64_t>(
                           Dims{}, {std::numeric_limits<std::int64_t>::max()}));
  Variable n_steps = known_trip_count.has_value() && known_trip_count->numel() == 1
                         ? int64_constant(exact_int_at(*known_trip_count, 0), label + "_trip_count")
                         : cast(as_scalar(ctx.input(0), "Loop's trip count M"), DType::Int64);
  bool until = false;
  if (has_condition) {
    // ONNX tests the condition before the first iteration and the body's after each; the loop
    // op tests its stop condition after each step, so a false initial condition means 0 steps.
    const std::optional<bool> known = known_truth(ctx, 1);
    if (!known.has_value()) {
      const Variable condition = as_bool_scalar(ctx.input(1), "Loop's condition");
      n_steps = mul(n_steps, cast(condition, DType::Int64));
    } else if (!*known) {
      n_steps = int64_constant(0, label + "_trip_count");
    }
    until = !condition_stays_true(body);
  }

  // The iteration number is a state of its own: 0, then one more per step.
  std::vector<ScanOutput> outputs_info{ScanOutput(int64_constant(0, label + "_iteration"))};
  for (const Variable& value : initial) outputs_info.emplace_back(value);
  for (int k = 0; k < scanned; ++k) outputs_info.push_back(ScanOutput::none());

  const Variable condition_in = constant(Tensor::scalar(1, DType::Bool), label + "_condition");
  auto step = [&](const std::vector<Variable>& in) {
    std::vector<Variable> body_inputs{in[0], condition_in};
    body_inputs.insert(body_inputs.end(), in.begin() + 1, in.end());
    std::vector<Variable> results = ctx.convert_subgraph("body", body_inputs);
    const Variable condition_out = results.front();
    results.front() = add(in[0], int64_constant(1, ""));
    if (until) {
      results.push_back(
          logical_not(as_bool_scalar(condition_out, "the Loop body's condition output")));
    }
    return results;
  };
  const ScanOptions options{.n_steps = n_steps, .name = label, .until = until};
  const ScanResult loop = build_loop([&] { return scan(step, {}, outputs_info, {}, options); },
                                     "Loop's carried values");

  const bool surely_runs =
      !until && n_steps.kind() == VariableKind::Constant && exact_int_at(n_steps.constant_value(), 0) > 0;
  Outputs outputs;
  for (int k = 0; k < carried; ++k) {
    outputs.push_back(final_state(loop.outputs[static_cast<std::size_t>(1 + k)],
                                  initial[static_cast<std::size_t>(k)], surely_runs));
  }
  for (int k = 0; k < scanned; ++k) {
    outputs.push_back(loop.outputs[static_cast<std::size_t>(1 + carried + k)]);
  }
  return outputs;
}

// ---- Scan ---------------------------------------------------------------------------------------

// Moves `axis` of x to the front.
Variable axis_to_front(const Variable& x, std::int64_t axis) {
  if (axis == 0) return x;
  std::vector<std::int64_t> pattern{axis};
  for (std::int64_t k = 0; k < x.rank(); ++k) {
    if (k != axis) pattern.push_back(k);
  }
  return dimshuffle(x, pattern);
}

// Moves the front axis of x to `axis`.
Variable front_to_axis(const Variable& x, std::int64_t axis) {
  if (axis == 0) return x;
  std::vector<std::int64_t> pattern;
  for (std::int64_t k = 1; k <= axis; ++k) pattern.push_back(k);
  pattern.push_back(0);
  for (std::int64_t k = axis + 1; k < x.rank(); ++k) pattern.push_back(k);
  return dimshuffle(x, pattern);
}

Variable reversed(const Variable& x) { return subtensor(x, {slice(none, none, -1)}); }

std::vector<std::int64_t> per_input(const NodeContext& ctx,
                                    std::string_view name,
                                    std::size_t count) {
  std::vector<std::int64_t> values = ctx.attribute_ints(name, {});
  if (values.empty()) values.assign(count, 0);
  if (values.size() != count) {
    throw_error(ErrorKind::InvalidArgument, "Scan: attribute '{}' has {} entries for {} {}", name,
                values.size(), count,
                name.find("output") != std::string_view::npos ? "scan outputs" : "scan inputs");
  }
  return values;
}

void check_direction(std::int64_t direction, std::string_view attribute) {
  if (direction != 0 && direction != 1) {
    throw_error(ErrorKind::InvalidArgument,
                "Scan: attribute '{}' holds {}; a direction is 0 (forward) or 1 (reverse)",
                attribute, direction);
  }
}

// A Scan's states and scan inputs, and how each scan input is read and each scan output written.
struct ScanPlan {
  std::vector<Variable> states;
  std::vector<Variable> scan_inputs;
  std::size_t scanned = 0;  // scan outputs
  std::vector<std::int64_t> input_axes;
  std::vector<std::int64_t> input_directions;
  std::vector<std::int64_t> output_axes;
  std::vector<std::int64_t> output_directions;
};

ScanPlan plan_scan(const NodeContext& ctx, std::vector<Variable> inputs) {
  const ::onnx::GraphProto& body = ctx.attribute_graph("body");
  const std::int64_t scan_input_count = ctx.required_attribute_int("num_scan_inputs");
  const auto total = static_cast<std::int64_t>(inputs.size());
  if (scan_input_count < 1 || scan_input_count > total) {
    throw_error(ErrorKind::InvalidArgument,
                "Scan: num_scan_inputs is {} for {} inputs; at least one scan input is needed",
                scan_input_count, total);
  }
  const auto state_count = static_cast<std::size_t>(total - scan_input_count);
  const auto sequence_count = static_cast<std::size_t>(scan_input_count);
  if (body.input_size() != total || body.output_size() < static_cast<int>(state_count)) {
    throw_error(ErrorKind::InvalidArgument,
                "Scan: the body has {} inputs and {} outputs for {} states and {} scan inputs",
                body.input_size(), body.output_size(), state_count, sequence_count);
  }
  ScanPlan plan;
  plan.scan_inputs.assign(inputs.begin() + static_cast<std::ptrdiff_t>(state_count), inputs.end());
  inputs.resize(state_count);
  plan.states = std::move(inputs);
  plan.scanned = static_cast<std::size_t>(body.output_size()) - state_count;
  return plan;
}

// The Scan node's loop (opset 9's semantics) over the plan's inputs.
Outputs scan_over(NodeContext& ctx, const ScanPlan& plan, const std::string& name) {
  std::vector<ScanSequence> sequences;
  std::int64_t known_length = kUnknownDim;  // the scan inputs' common length, when known
  for (std::size_t j = 0; j < plan.scan_inputs.size(); ++j) {
    const Variable& value = plan.scan_inputs[j];
    check_direction(plan.input_directions[j], "scan_input_directions");
    if (value.rank() < 1) {
      throw_error(ErrorKind::InvalidArgument,
                  "Scan: scan input {} is a scalar; it needs an axis to scan", j);
    }
    const std::int64_t axis = ctx.axis(plan.input_axes[j], value.rank(), "scan input axis");
    Variable sequence = axis_to_front(value, axis);
    if (plan.input_directions[j] == 1) sequence = reversed(sequence);
    const std::int64_t length = sequence.type().dims[0];
    if (length != kUnknownDim && known_length != kUnknownDim && length != known_length) {
      throw_error(ErrorKind::ShapeMismatch,
                  "Scan: scan input {} has {} entries along its scan axis, an earlier one {}; "
                  "they must agree",
                  j, length, known_length);
    }
    if (length != kUnknownDim) known_length = length;
    sequences.emplace_back(sequence);
  }
  const bool all_known = std::all_of(sequences.begin(), sequences.end(), [](const auto& sequence) {
    return sequence.value.type().dims[0] != kUnknownDim;
  });
  const bool runs_a_step = all_known && known_length > 0;
  ScanOptions options{.name = name};
  // A static step count gives the stacked outputs static shapes.
  if (all_known) options.n_steps = known_length;
  std::vector<ScanOutput> outputs_info(plan.states.begin(), plan.states.end());
  for (std::size_t k = 0; k < plan.scanned; ++k) outputs_info.push_back(ScanOutput::none());

  // The loop's placeholders come sequences first; ONNX's body takes the states first.
  const auto sequence_count = static_cast<std::ptrdiff_t>(sequences.size());
  auto step = [&](const std::vector<Variable>& in) {
    std::vector<Variable> body_inputs(in.begin() + sequence_count, in.end());
    body_inputs.insert(body_inputs.end(), in.begin(), in.begin() + sequence_count);
    return ctx.convert_subgraph("body", body_inputs);
  };
  const ScanResult loop =
      build_loop([&] { return scan(step, sequences, outputs_info, {}, options); }, "Scan's states");

  const std::size_t state_count = plan.states.size();
  Outputs outputs;
  for (std::size_t i = 0; i < state_count; ++i) {
    outputs.push_back(final_state(loop.outputs[i], plan.states[i], runs_a_step));
  }
  for (std::size_t k = 0; k < plan.scanned; ++k) {
    check_direction(plan.output_directions[k], "scan_output_directions");
    Variable stacked = loop.outputs[state_count + k];
    if (plan.output_directions[k] == 1) stacked = reversed(stacked);
    outputs.push_back(
        front_to_axis(stacked, ctx.axis(plan.output_axes[k], stacked.rank(), "scan output axis")));
  }
  return outputs;
}

Outputs convert_scan(NodeContext& ctx) {
  ScanPlan plan = plan_scan(ctx, ctx.inputs_from(0));
  plan.input_axes = per_input(ctx, "scan_input_axes", plan.scan_inputs.size());
  plan.input_directions = per_input(ctx, "scan_input_directions", plan.scan_inputs.size());
  plan.output_axes = per_input(ctx, "scan_output_axes", plan.scanned);
  plan.output_directions = per_input(ctx, "scan_output_directions", plan.scanned);
  return scan_over(ctx, plan, node_label(ctx));
}

// Opset 8's Scan has a batch axis 0 on every input and output, scans axis 1, and takes optional
// per-batch lengths. Without lengths it is opset 9's Scan run on each batch entry: a loop over
// the batch whose step is that Scan.
Outputs convert_scan_8(NodeContext& ctx) {
  if (ctx.has_input(0)) ctx.unsupported("Scan-8's sequence_lens (per-batch sequence lengths)");
  const ScanPlan batched = plan_scan(ctx, ctx.inputs_from(1));
  const std::string label = node_label(ctx);
  std::vector<ScanSequence> batch_entries(batched.states.begin(), batched.states.end());
  batch_entries.insert(batch_entries.end(), batched.scan_inputs.begin(), batched.scan_inputs.end());
  const std::vector<std::int64_t> directions =
      per_input(ctx, "directions", batched.scan_inputs.size());
  auto step = [&](const std::vector<Variable>& entry) {
    ScanPlan plan;
    plan.states.assign(entry.begin(),
                       entry.begin() + static_cast<std::ptrdiff_t>(batched.states.size()));
    plan.scan_inputs.assign(entry.begin() + static_cast<std::ptrdiff_t>(batched.states.size()),
                            entry.end());
    plan.scanned = batched.scanned;
    plan.input_axes.assign(plan.scan_inputs.size(), 0);
    plan.input_directions = directions;
    plan.output_axes.assign(plan.scanned, 0);
    plan.output_directions.assign(plan.scanned, 0);
    return scan_over(ctx, plan, label);
  };
  std::vector<ScanOutput> per_entry(batched.states.size() + batched.scanned, ScanOutput::none());
  return scan(step, batch_entries, per_entry, {}, {.name = label + "_batch"}).outputs;
}

// ---- If -----------------------------------------------------------------------------------------

bool dims_agree(const Dims& a, const Dims& b) {
  if (a.rank() != b.rank()) return false;
  for (int axis = 0; axis < a.rank(); ++axis) {
    if (a[axis] != kUnknownDim && b[axis] != kUnknownDim && a[axis] != b[axis]) return false;
  }
  return true;
}

Outputs convert_if(NodeContext& ctx) {
  // A condition known at import picks its branch; the other one is never converted.
  if (const std::optional<bool> known = known_truth(ctx, 0)) {
    ctx.ignore_attribute(*known ? "else_branch" : "then_branch");
    return ctx.convert_subgraph(*known ? "then_branch" : "else_branch", {});
  }
  const Variable condition = as_bool_scalar(ctx.input(0), "If's condition");
  const Outputs then_values = ctx.convert_subgraph("then_branch", {});
  const Outputs else_values = ctx.convert_subgraph("else_branch", {});
  if (then_values.size() != else_values.size()) {
    throw_error(ErrorKind::InvalidArgument, "If: then_branch has {} outputs, else_branch {}",
                then_values.size(), else_values.size());
  }
  Outputs outputs;
  for (std::size_t k = 0; k < then_values.size(); ++k) {
    const Type& then_type = then_values[k].type();
    const Type& else_type = else_values[k].type();
    if (then_type.dtype != else_type.dtype || !dims_agree(then_type.dims, else_type.dims)) {
      throw_error(ErrorKind::Unsupported,
                  "If: output {} is {} in then_branch and {} in else_branch; both branches are "
                  "evaluated and selected elementwise, which needs the same dtype and shape",
                  k, then_type.to_string(), else_type.to_string());
    }
    outputs.push_back(switch_(condition, then_values[k], else_values[k]));
  }
  return outputs;
}

}  // namespace

void register_control_converters(ConverterTable& table) {
  table.add("If", 1, convert_if);
  table.add("Loop", 1, convert_loop);
  table.add("Scan", 8, convert_scan_8);
  table.add("Scan", 9, convert_scan);
}

}  // namespace tscope::onnx
