// SPDX-License-Identifier: Apache-2.0
// Changed copies of a loop's body for the loop rewrites (tscope/rewrite/loop_rules.h), and the
// graph helper they share with the gradient.
#include <unordered_set>

#include "scan_body.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/clone_replace.h"
#include "tscope/graph/traversal.h"

namespace tscope::runtime {

std::vector<Variable> clone_with(const std::vector<Variable>& outputs,
                                 const std::vector<std::pair<Variable, Variable>>& replacements) {
  std::unordered_set<const VariableNode*> reached;
  for (const Variable& output : outputs) reached.insert(output.node());
  for (ApplyNode* node : ancestors_in_topological_order(outputs)) {
    for (const Variable& input : node->inputs()) reached.insert(input.node());
  }
  std::vector<std::pair<Variable, Variable>> used;
  for (const auto& replacement : replacements) {
    if (reached.count(replacement.first.node()) != 0) used.push_back(replacement);
  }
  if (used.empty()) return outputs;
  return clone_replace(outputs, used);
}

std::vector<Variable> values_read_outside(const std::vector<ApplyNode*>& order,
                                          const std::function<bool(const ApplyNode*)>& moves,
                                          const std::vector<Variable>& outputs) {
  std::vector<Variable> read;
  std::unordered_set<const VariableNode*> seen;
  auto add = [&](const Variable& value) {
    if (value.owner() == nullptr || !moves(value.owner())) return;
    if (seen.insert(value.node()).second) read.push_back(value);
  };
  for (const ApplyNode* node : order) {
    if (moves(node)) continue;
    for (const Variable& input : node->inputs()) add(input);
  }
  for (const Variable& output : outputs) add(output);
  return read;
}

std::optional<LoopBody::Hoisted> ScanBody::hoist_invariants(
    const std::vector<Variable>& outer_inputs) const {
  // Values that depend only on non-sequences and constants, in topological order.
  std::unordered_set<const VariableNode*> invariant;
  for (int p = 0; p < layout_.non_sequence_count; ++p) {
    invariant.insert(inputs_[static_cast<std::size_t>(layout_.body_non_sequence_input(p))].node());
  }
  const std::vector<ApplyNode*> order = ancestors_in_topological_order(outputs_);
  std::unordered_set<const ApplyNode*> hoistable;
  for (ApplyNode* node : order) {
    bool reads_only_invariants = true;
    for (const Variable& input : node->inputs()) {
      reads_only_invariants = reads_only_invariants && (input.kind() == VariableKind::Constant ||
                                                        invariant.count(input.node()) != 0);
    }
    if (!reads_only_invariants) continue;
    hoistable.insert(node);
    for (int i = 0; i < node->num_outputs(); ++i) invariant.insert(&node->output_node(i));
  }
  const std::vector<Variable> frontier = values_read_outside(
      order, [&](const ApplyNode* node) { return hoistable.count(node) != 0; }, outputs_);
  if (frontier.empty()) return std::nullopt;

  std::vector<std::pair<Variable, Variable>> to_outer;
  for (int p = 0; p < layout_.non_sequence_count; ++p) {
    to_outer.emplace_back(inputs_[static_cast<std::size_t>(layout_.body_non_sequence_input(p))],
                          outer_inputs[static_cast<std::size_t>(layout_.non_sequence_input(p))]);
  }
  const std::vector<Variable> computed_outside = clone_with(frontier, to_outer);
  std::vector<std::pair<Variable, Variable>> to_placeholders;
  std::vector<Variable> inputs = inputs_;
  for (const Variable& value : frontier) {
    Variable placeholder = make_input(value.dtype(), value.type().dims,
                                      value.name().empty() ? value.to_string() : value.name(),
                                      std::source_location::current());
    to_placeholders.emplace_back(value, placeholder);
    inputs.push_back(placeholder);
  }
  ScanLayout layout = layout_;
  layout.non_sequence_count += static_cast<int>(frontier.size());
  Hoisted hoisted;
  hoisted.body = std::make_shared<const ScanBody>(std::move(layout), std::move(inputs),
                                                  clone_with(outputs_, to_placeholders));
  hoisted.outer_inputs = outer_inputs;
  hoisted.outer_inputs.insert(hoisted.outer_inputs.end(), computed_outside.begin(),
                              computed_outside.end());
  return hoisted;
}

std::vector<std::int64_t> ScanBody::invariant_instructions() const {
  const Linked& body = linked();
  std::unordered_set<const VariableNode*> invariant;
  for (int p = 0; p < layout_.non_sequence_count; ++p) {
    invariant.insert(
        body.graph.inputs()[static_cast<std::size_t>(layout_.body_non_sequence_input(p))].node());
  }
  std::vector<std::int64_t> found;
  for (std::size_t index = 0; index < body.program.instruction_count(); ++index) {
    const ApplyNode* node = body.program.node(index);
    bool reads_only_invariants = true;
    for (const Variable& input : node->inputs()) {
      reads_only_invariants = reads_only_invariants && (input.kind() == VariableKind::Constant ||
                                                        invariant.count(input.node()) != 0);
    }
    if (!reads_only_invariants) continue;
    found.push_back(static_cast<std::int64_t>(index));
    for (int i = 0; i < node->num_outputs(); ++i) invariant.insert(&node->output_node(i));
  }
  return found;
}

std::optional<LoopBody::Hoisted> ScanBody::merged_with(
    const LoopBody& other_body,
    const std::vector<Variable>& outer_inputs,
    const std::vector<Variable>& other_outer_inputs) const {
  const auto* other = dynamic_cast<const ScanBody*>(&other_body);
  if (other == nullptr || other == this) return std::nullopt;
  const ScanLayout& a = layout_;
  const ScanLayout& b = other->layout_;
  if (a.until || b.until || a.go_backwards != b.go_backwards ||
      a.sequence_taps != b.sequence_taps || a.sequence_count() == 0 ||
      !(outer_inputs[0] == other_outer_inputs[0])) {
    return std::nullopt;
  }
  for (int j = 0; j < a.sequence_count(); ++j) {
    const auto index = static_cast<std::size_t>(a.sequence_input(j));
    if (!(outer_inputs[index] == other_outer_inputs[index])) return std::nullopt;
  }
  // The other body reads this body's sequence rows, and fresh placeholders for the rest: two
  // bodies may share placeholders (a gradient's twin of a loop reuses the loop's).
  std::vector<std::pair<Variable, Variable>> renamed;
  std::vector<Variable> other_inputs;
  const int sequence_taps = a.sequence_tap_input(a.sequence_count(), 0);
  for (int i = 0; i < b.body_input_count(); ++i) {
    const Variable& from = other->inputs_[static_cast<std::size_t>(i)];
    Variable to = i < sequence_taps ? inputs_[static_cast<std::size_t>(i)]
                                    : make_input(from.dtype(), from.type().dims, from.name(),
                                                 std::source_location::current());
    renamed.emplace_back(from, to);
    other_inputs.push_back(to);
  }
  const std::vector<Variable> other_outputs = clone_with(other->outputs_, renamed);

  ScanLayout layout = a;
  layout.name = a.name + "&" + b.name;
  layout.outputs.insert(layout.outputs.end(), b.outputs.begin(), b.outputs.end());
  layout.non_sequence_count = a.non_sequence_count + b.non_sequence_count;
  auto range = [](const std::vector<Variable>& values, int from, int to) {
    return std::vector<Variable>(values.begin() + from, values.begin() + to);
  };
  const auto a_states = static_cast<int>(a.outputs.size());
  const auto b_states = static_cast<int>(b.outputs.size());
  std::vector<Variable> inputs = range(inputs_, 0, sequence_taps);
  for (const auto& part :
       {range(inputs_, sequence_taps, a.body_non_sequence_input(0)),
        range(other_inputs, sequence_taps, b.body_non_sequence_input(0)),
        range(inputs_, a.body_non_sequence_input(0), a.body_input_count()),
        range(other_inputs, b.body_non_sequence_input(0), b.body_input_count())}) {
    inputs.insert(inputs.end(), part.begin(), part.end());
  }
  std::vector<Variable> outputs = outputs_;
  outputs.insert(outputs.end(), other_outputs.begin(), other_outputs.end());

  Hoisted merged;
  merged.outer_inputs = range(outer_inputs, 0, a.initial_input(a_states));
  for (const auto& part :
       {range(other_outer_inputs, b.initial_input(0), b.initial_input(b_states)),
        range(outer_inputs, a.non_sequence_input(0), a.outer_input_count()),
        range(other_outer_inputs, b.non_sequence_input(0), b.outer_input_count())}) {
    merged.outer_inputs.insert(merged.outer_inputs.end(), part.begin(), part.end());
  }
  merged.body =
      std::make_shared<const ScanBody>(std::move(layout), std::move(inputs), std::move(outputs));
  return merged;
}

bool ScanBody::can_keep_last_only(int output) const {
  const ScanLayout::Output& spec = layout_.outputs[static_cast<std::size_t>(output)];
  return spec.is_state() && !spec.last_only;
}

std::shared_ptr<const LoopBody> ScanBody::with_last_only(int output) const {
  ScanLayout layout = layout_;
  layout.outputs[static_cast<std::size_t>(output)].last_only = true;
  return std::make_shared<const ScanBody>(std::move(layout), inputs_, outputs_);
}

}  // namespace tscope::runtime
