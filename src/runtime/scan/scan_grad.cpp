// SPDX-License-Identifier: Apache-2.0
// The gradient of a Scan: another Scan, `grad_of_<name>`, running over the steps backwards.
//
// At backward step s it redoes forward step t = n-1-s's body on the forward values of that step
// (sequence rows, and the state rows read from the forward stacks) and takes the body's
// vector-Jacobian product with grad_of_outputs. Its own recurrent states are:
//  - per differentiated state with window L, L carries: carry i holds the gradient still owed to
//    the state's value i-1 steps before the current one (reads of it by later steps' taps);
//  - per differentiated non-sequence, the sum of its step gradients.
// Only their final values come out (last-only outputs). The sequences' step gradients are the
// backward scan's stacked outputs, put back in time order and added at each tap's offset.
#include <fmt/format.h>

#include <unordered_set>

#include "scan_body.h"
#include "tscope/grad/grad.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/clone_replace.h"
#include "tscope/graph/traversal.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/shape.h"

namespace tscope::runtime {
namespace {

Type row_type_of(const Type& type) {
  return Type{type.dtype,
              Dims(std::span<const std::int64_t>(type.dims.begin() + 1, type.dims.end()))};
}

Variable placeholder(const Type& type, const std::string& name) {
  return make_input(type.dtype, type.dims, name, std::source_location::current());
}

Variable with_leading_axis(const Variable& x) {
  std::vector<std::int64_t> pattern{kNewAxis};
  for (int axis = 0; axis < x.rank(); ++axis) pattern.push_back(axis);
  return dimshuffle(x, pattern);
}

Variable reversed(const Variable& x) { return subtensor(x, {slice(none, none, -1)}); }

// x[start : start + n] along axis 0.
Variable rows_from(const Variable& x, std::int64_t start, const Variable& n) {
  return subtensor(x, {slice(start, start == 0 ? n : add(n, static_cast<int>(start)))});
}

}  // namespace

std::vector<Variable> ScanBody::pullback(const PullbackContext& context) const {
  const ScanLayout& layout = layout_;
  const std::vector<Variable> outer(context.inputs.begin(), context.inputs.end());
  const int output_count = static_cast<int>(layout.outputs.size());

  // Every step's state values: from the outputs, or, for outputs that come out last-only, from
  // a twin of this loop that stacks them.
  std::vector<Variable> stacked(context.outputs.begin(), context.outputs.end());
  bool any_last_only = false;
  for (const ScanLayout::Output& output : layout.outputs) any_last_only |= output.last_only;
  if (any_last_only) {
    ScanLayout twin_layout = layout;
    for (ScanLayout::Output& output : twin_layout.outputs) output.last_only = false;
    auto twin = std::make_shared<const ScanBody>(std::move(twin_layout), inputs_, outputs_);
    stacked = apply_scan(std::move(twin), outer, std::source_location::current());
  }

  // The steps that ran: n_steps, or, for a while loop, the stacked outputs' length.
  const Variable n = layout.until ? shape_i(stacked[0], 0) : outer[0];

  ScanLayout back;
  back.name = "grad_of_" + layout.name;
  back.go_backwards = true;
  std::vector<Variable> back_outer{n};
  std::vector<Variable> seq_placeholders;
  std::vector<std::pair<Variable, Variable>> forward_inputs;  // forward placeholder -> backward

  // Sequences (a): the forward rows of each sequence tap, as a sequence of exactly n rows.
  struct SequenceTap {
    int j;
    std::int64_t offset;
    Variable placeholder;
  };
  // Every tap is read by the backward body; only floating sequences' taps get gradients.
  std::vector<SequenceTap> sequence_taps;
  for (int j = 0; j < layout.sequence_count(); ++j) {
    const Variable& sequence = outer[static_cast<std::size_t>(layout.sequence_input(j))];
    const Variable oriented = layout.go_backwards ? reversed(sequence) : sequence;
    const auto& taps = layout.sequence_taps[static_cast<std::size_t>(j)];
    for (std::size_t k = 0; k < taps.size(); ++k) {
      const Variable& forward =
          inputs_[static_cast<std::size_t>(layout.sequence_tap_input(j, static_cast<int>(k)))];
      Variable row = placeholder(forward.type(), forward.name());
      forward_inputs.emplace_back(forward, row);
      back.sequence_taps.push_back({0});
      back_outer.push_back(rows_from(oriented, taps[k] - taps.front(), n));
      seq_placeholders.push_back(row);
      if (is_floating(sequence.dtype())) sequence_taps.push_back({j, taps[k] - taps.front(), row});
    }
  }
  // Sequences (b): the state rows each forward step read, from the stack window + outputs.
  std::vector<std::vector<Variable>> state_rows(static_cast<std::size_t>(output_count));
  for (int o = 0; o < output_count; ++o) {
    const ScanLayout::Output& output = layout.outputs[static_cast<std::size_t>(o)];
    if (!output.is_state()) continue;
    const Variable& initial = outer[static_cast<std::size_t>(layout.initial_input(o))];
    const Variable full = join(0, {initial, stacked[static_cast<std::size_t>(o)]});
    for (std::size_t k = 0; k < output.taps.size(); ++k) {
      const Variable& forward =
          inputs_[static_cast<std::size_t>(layout.state_tap_input(o, static_cast<int>(k)))];
      Variable row = placeholder(forward.type(), forward.name());
      forward_inputs.emplace_back(forward, row);
      back.sequence_taps.push_back({0});
      back_outer.push_back(rows_from(full, output.window() + output.taps[k], n));
      seq_placeholders.push_back(row);
      state_rows[static_cast<std::size_t>(o)].push_back(row);
    }
  }
  // Sequences (c): the stacked outputs' gradients, row by row.
  std::vector<Variable> output_grad_rows(static_cast<std::size_t>(output_count));
  for (int o = 0; o < output_count; ++o) {
    const Variable& gradient = context.output_grads[static_cast<std::size_t>(o)];
    if (!gradient.defined() || layout.outputs[static_cast<std::size_t>(o)].last_only) continue;
    Variable row = placeholder(row_type_of(gradient.type()), fmt::format("grad_out{}[t]", o));
    back.sequence_taps.push_back({0});
    back_outer.push_back(gradient);
    seq_placeholders.push_back(row);
    output_grad_rows[static_cast<std::size_t>(o)] = row;
  }

  // States (d): the carries of each differentiated state.
  struct Carries {
    int o;
    std::vector<Variable> placeholders;  // carry 1 .. L
  };
  std::vector<Carries> carries;
  std::vector<Variable> state_placeholders;
  std::vector<Variable> initial_values;
  for (int o = 0; o < output_count; ++o) {
    const ScanLayout::Output& output = layout.outputs[static_cast<std::size_t>(o)];
    if (!output.is_state() || !is_floating(outputs_[static_cast<std::size_t>(o)].dtype())) continue;
    const Variable& initial = outer[static_cast<std::size_t>(layout.initial_input(o))];
    const Variable zero_row = zeros_like(subtensor(initial, {0}));
    Carries carry{o, {}};
    for (std::int64_t i = 1; i <= output.window(); ++i) {
      Variable value = zero_row;
      const Variable& final_grad = context.output_grads[static_cast<std::size_t>(o)];
      if (i == 1 && output.last_only && final_grad.defined()) value = final_grad;
      ScanLayout::Output carried;
      carried.taps = {-1};
      carried.last_only = true;
      back.outputs.push_back(carried);
      initial_values.push_back(with_leading_axis(value));
      Variable row = placeholder(zero_row.type(), fmt::format("carry{}_{}", o, i));
      carry.placeholders.push_back(row);
      state_placeholders.push_back(row);
    }
    carries.push_back(std::move(carry));
  }
  // States (e): the sums of the non-sequences' gradients.
  std::vector<int> summed;  // non-sequence indices
  std::vector<Variable> non_sequence_placeholders;
  for (int p = 0; p < layout.non_sequence_count; ++p) {
    const Variable& value = outer[static_cast<std::size_t>(layout.non_sequence_input(p))];
    const Variable& forward = inputs_[static_cast<std::size_t>(layout.body_non_sequence_input(p))];
    Variable inside = placeholder(forward.type(), forward.name());
    forward_inputs.emplace_back(forward, inside);
    non_sequence_placeholders.push_back(inside);
    if (!is_floating(value.dtype())) continue;
    ScanLayout::Output carried;
    carried.taps = {-1};
    carried.last_only = true;
    back.outputs.push_back(carried);
    initial_values.push_back(with_leading_axis(zeros_like(value)));
    Variable row = placeholder(forward.type(), fmt::format("grad_{}", forward.name()));
    state_placeholders.push_back(row);
    summed.push_back(p);
  }

  // The backward body: the forward body on the backward placeholders, and its VJP.
  std::vector<Variable> redone = clone_with(outputs_, forward_inputs);
  redone.resize(
      static_cast<std::size_t>(output_count));  // a while loop's condition has no gradient
  std::vector<Variable> cotangents(static_cast<std::size_t>(output_count));
  bool any_cotangent = false;
  for (int o = 0; o < output_count; ++o) {
    Variable total;
    for (const Carries& carry : carries) {
      if (carry.o == o) total = carry.placeholders[0];
    }
    const Variable& row_grad = output_grad_rows[static_cast<std::size_t>(o)];
    if (row_grad.defined()) total = total.defined() ? add(total, row_grad) : row_grad;
    if (total.defined() && is_floating(redone[static_cast<std::size_t>(o)].dtype())) {
      cotangents[static_cast<std::size_t>(o)] = total;
      any_cotangent = true;
    }
  }
  std::vector<Variable> wrt;
  for (const SequenceTap& tap : sequence_taps) wrt.push_back(tap.placeholder);
  for (const Carries& carry : carries) {
    for (const Variable& row : state_rows[static_cast<std::size_t>(carry.o)]) wrt.push_back(row);
  }
  for (int p : summed) wrt.push_back(non_sequence_placeholders[static_cast<std::size_t>(p)]);
  std::vector<Variable> step_grads;
  if (any_cotangent) {
    step_grads =
        grad_of_outputs(redone, cotangents, wrt, {.disconnected = DisconnectedPolicy::Zero});
  } else {
    for (const Variable& target : wrt) step_grads.push_back(zeros_like(target));
  }

  // The backward step's outputs: new carries, new sums, then the sequences' step gradients.
  std::vector<Variable> back_outputs;
  std::size_t next_grad = sequence_taps.size();
  for (const Carries& carry : carries) {
    const ScanLayout::Output& output = layout.outputs[static_cast<std::size_t>(carry.o)];
    std::vector<Variable> tap_grads(static_cast<std::size_t>(output.window()) + 1);
    for (std::int64_t tap : output.taps)
      tap_grads[static_cast<std::size_t>(-tap)] = step_grads[next_grad++];
    const auto window = static_cast<std::size_t>(output.window());
    for (std::size_t i = 1; i <= window; ++i) {
      Variable owed = i < window ? carry.placeholders[i] : Variable();
      const Variable& direct = tap_grads[i];
      if (owed.defined() && direct.defined()) {
        back_outputs.push_back(add(owed, direct));
      } else {
        back_outputs.push_back(owed.defined() ? owed : direct);
      }
    }
  }
  for (std::size_t k = 0; k < summed.size(); ++k) {
    back_outputs.push_back(add(state_placeholders[state_placeholders.size() - summed.size() + k],
                               step_grads[next_grad++]));
  }
  for (std::size_t k = 0; k < sequence_taps.size(); ++k) {
    back.outputs.push_back({});
    back_outputs.push_back(step_grads[k]);
  }
  back.non_sequence_count = layout.non_sequence_count;
  std::vector<Variable> back_inputs = seq_placeholders;
  back_inputs.insert(back_inputs.end(), state_placeholders.begin(), state_placeholders.end());
  back_inputs.insert(back_inputs.end(), non_sequence_placeholders.begin(),
                     non_sequence_placeholders.end());
  back_outer.insert(back_outer.end(), initial_values.begin(), initial_values.end());
  for (int p = 0; p < layout.non_sequence_count; ++p) {
    back_outer.push_back(outer[static_cast<std::size_t>(layout.non_sequence_input(p))]);
  }
  auto backward = std::make_shared<const ScanBody>(std::move(back), std::move(back_inputs),
                                                   std::move(back_outputs));
  const std::vector<Variable> results =
      apply_scan(std::move(backward), std::move(back_outer), std::source_location::current());

  // Gradients of the outer inputs.
  std::vector<Variable> grads(outer.size());
  std::size_t next_result = 0;
  for (const Carries& carry : carries) {
    const ScanLayout::Output& output = layout.outputs[static_cast<std::size_t>(carry.o)];
    // Carry i ends owing the gradient of the value i steps before step 0: window row L - i.
    std::vector<Variable> rows(static_cast<std::size_t>(output.window()));
    for (std::int64_t i = 1; i <= output.window(); ++i) {
      rows[static_cast<std::size_t>(output.window() - i)] = results[next_result++];
    }
    grads[static_cast<std::size_t>(layout.initial_input(carry.o))] = stack(rows, 0);
  }
  for (int p : summed) {
    grads[static_cast<std::size_t>(layout.non_sequence_input(p))] = results[next_result++];
  }
  for (const SequenceTap& tap : sequence_taps) {
    const Variable& sequence = outer[static_cast<std::size_t>(layout.sequence_input(tap.j))];
    Variable& total = grads[static_cast<std::size_t>(layout.sequence_input(tap.j))];
    if (!total.defined()) total = zeros_like(sequence);
    // Stacked in backward order: reversed, row s is forward step s's. A loop that ran no step
    // stacks nothing, and its empty stack's row shape is only what the step gradient's type
    // knows: the rows take the sequence's row shape (a view when there are rows).
    const Variable stacked = results[next_result++];
    std::vector<Variable> dims{shape_i(stacked, 0)};
    for (int axis = 1; axis < sequence.rank(); ++axis) dims.push_back(shape_i(sequence, axis));
    const Variable step_rows = reversed(reshape(stacked, stack(dims, 0)));
    Variable region = layout.go_backwards ? reversed(total) : total;
    region = inc_subtensor(
        region, {slice(tap.offset, tap.offset == 0 ? n : add(n, static_cast<int>(tap.offset)))},
        step_rows);
    total = layout.go_backwards ? reversed(region) : region;
  }
  return grads;
}

}  // namespace tscope::runtime
