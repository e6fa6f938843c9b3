// SPDX-License-Identifier: Apache-2.0
// The rewrite push_out_sequence_work's copy of a body (Theano's scan push-out of sequence ops):
// a body value computed from one sequence row and loop-invariant values only is computed for
// every row at once, before the loop, and the loop reads it as a new sequence. One matrix
// product over all the rows (steps x batch rows) replaces a small product per step, and an
// elementwise chain runs as one pass over the sequence instead of one node call per step.
#include <functional>
#include <unordered_map>

#include "scan_body.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/provenance.h"
#include "tscope/graph/traversal.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/shape.h"

namespace tscope::runtime {
namespace {

// What a body value depends on: loop-invariant values only, one sequence tap (and invariant
// values), or anything else (a state, two different rows, an op that cannot be lifted).
struct Dependence {
  enum class Kind { Invariant, Row, Other };
  Kind kind = Kind::Other;
  int tap_input = -1;  // Row: the body input of the sequence tap
};

bool is_matrix_product(const ApplyNode& node) {
  return (node.op().name == "Dot" || node.op().name == "Dot22") && node.num_inputs() == 2;
}

// Whether `node`, reading one sequence row and invariant values, has a form over all rows.
bool liftable(const ApplyNode& node, const std::vector<Dependence>& inputs) {
  if (node.op().traits.elementwise && node.num_outputs() == 1) return true;
  // row . W with a vector or matrix row and an invariant matrix W: one product over all rows.
  return is_matrix_product(node) && inputs[0].kind == Dependence::Kind::Row &&
         inputs[1].kind == Dependence::Kind::Invariant && node.input(0).rank() <= 2 &&
         node.input(1).rank() == 2;
}

}  // namespace

std::optional<LoopBody::Hoisted> ScanBody::push_out_sequence_work(
    const std::vector<Variable>& outer_inputs) const {
  const ScanLayout& layout = layout_;
  // A while loop often stops long before its sequences end: the rows past its last step would
  // be computed for nothing.
  if (layout.until || layout.sequence_count() == 0) return std::nullopt;

  std::unordered_map<const VariableNode*, Dependence> dependence;
  for (int j = 0; j < layout.sequence_count(); ++j) {
    for (std::size_t k = 0; k < layout.sequence_taps[static_cast<std::size_t>(j)].size(); ++k) {
      const int input = layout.sequence_tap_input(j, static_cast<int>(k));
      dependence[inputs_[static_cast<std::size_t>(input)].node()] = {Dependence::Kind::Row, input};
    }
  }
  for (int p = 0; p < layout.non_sequence_count; ++p) {
    dependence[inputs_[static_cast<std::size_t>(layout.body_non_sequence_input(p))].node()] = {
        Dependence::Kind::Invariant, -1};
  }
  auto of = [&](const Variable& value) -> Dependence {
    if (value.kind() == VariableKind::Constant) return {Dependence::Kind::Invariant, -1};
    const auto found = dependence.find(value.node());
    return found == dependence.end() ? Dependence{} : found->second;
  };

  const std::vector<ApplyNode*> order = ancestors_in_topological_order(outputs_);
  std::unordered_map<const ApplyNode*, bool> lifted_nodes;
  for (ApplyNode* node : order) {
    std::vector<Dependence> inputs;
    Dependence result{Dependence::Kind::Invariant, -1};
    for (const Variable& input : node->inputs()) {
      inputs.push_back(of(input));
      const Dependence& d = inputs.back();
      if (d.kind == Dependence::Kind::Other ||
          (d.kind == Dependence::Kind::Row && result.kind == Dependence::Kind::Row &&
           d.tap_input != result.tap_input)) {
        result = {};
        break;
      }
      if (d.kind == Dependence::Kind::Row) result = d;
    }
    if (result.kind == Dependence::Kind::Row && !liftable(*node, inputs)) result = {};
    lifted_nodes[node] = result.kind == Dependence::Kind::Row;
    for (int i = 0; i < node->num_outputs(); ++i) dependence[&node->output_node(i)] = result;
  }

  // The row values the rest of the body reads, and the outputs that are row values.
  const std::vector<Variable> frontier = values_read_outside(
      order, [&](const ApplyNode* node) { return lifted_nodes[node]; }, outputs_);
  if (frontier.empty()) return std::nullopt;

  // Outer forms: a sequence tap becomes the rows it reads at steps 0, 1, ...; an invariant value
  // is computed from the outer non-sequences; a lifted node applies its op to those.
  std::vector<std::pair<Variable, Variable>> to_outer;
  for (int p = 0; p < layout.non_sequence_count; ++p) {
    to_outer.emplace_back(inputs_[static_cast<std::size_t>(layout.body_non_sequence_input(p))],
                          outer_inputs[static_cast<std::size_t>(layout.non_sequence_input(p))]);
  }
  std::unordered_map<const VariableNode*, Variable> outer_rows;
  for (int j = 0; j < layout.sequence_count(); ++j) {
    const auto& taps = layout.sequence_taps[static_cast<std::size_t>(j)];
    const Variable& sequence = outer_inputs[static_cast<std::size_t>(layout.sequence_input(j))];
    for (std::size_t k = 0; k < taps.size(); ++k) {
      // Step t reads row t + offset of the sequence as the loop orients it; the loop reverses a
      // new sequence too, so when it runs backwards the rows come from the front.
      const std::int64_t offset = taps[k] - taps.front();
      Variable rows = sequence;
      if (offset != 0) {
        rows = layout.go_backwards ? subtensor(sequence, {slice(none, -offset)})
                                   : subtensor(sequence, {slice(offset, none)});
      }
      const int input = layout.sequence_tap_input(j, static_cast<int>(k));
      outer_rows[inputs_[static_cast<std::size_t>(input)].node()] = rows;
    }
  }
  std::function<Variable(const Variable&)> outer_of = [&](const Variable& value) -> Variable {
    if (const auto found = outer_rows.find(value.node()); found != outer_rows.end()) {
      return found->second;
    }
    const ApplyNode& node = *value.owner();
    // Every node built for it points at the user's code that built the body node.
    const ProvenanceScope scope(node.provenance(), /*forced=*/true);
    std::vector<Variable> inputs;
    if (is_matrix_product(node)) {
      const Variable rows = outer_of(node.input(0));
      const Variable weights = clone_with({node.input(1)}, to_outer)[0];
      Variable product;
      if (node.input(0).rank() == 1) {
        product = dot(rows, weights);
      } else {
        // (steps, batch, in) as (steps * batch, in), times W, back to (steps, batch, out).
        const Variable steps = shape_i(rows, 0);
        const Variable batch = shape_i(rows, 1);
        const Variable flat = reshape(rows, stack({steps * batch, shape_i(rows, 2)}, 0));
        product = reshape(dot(flat, weights), stack({steps, batch, shape_i(weights, 1)}, 0));
      }
      outer_rows[value.node()] = product;
      return product;
    }
    // Elementwise: NumPy broadcasting aligns a row's axes from the right, so each input first
    // gets the row rank, then the rows' leading axis (size 1 for an invariant value).
    const int rank = value.rank();
    for (const Variable& input : node.inputs()) {
      const int missing = rank - input.rank();
      if (of(input).kind == Dependence::Kind::Row) {
        std::vector<std::int64_t> pattern{0};
        for (int i = 0; i < missing; ++i) pattern.push_back(kNewAxis);
        for (int axis = 0; axis < input.rank(); ++axis) pattern.push_back(axis + 1);
        const Variable rows = outer_of(input);
        inputs.push_back(missing == 0 ? rows : dimshuffle(rows, pattern));
      } else {
        std::vector<std::int64_t> pattern(static_cast<std::size_t>(missing + 1), kNewAxis);
        for (int axis = 0; axis < input.rank(); ++axis) pattern.push_back(axis);
        inputs.push_back(dimshuffle(clone_with({input}, to_outer)[0], pattern));
      }
    }
    const std::shared_ptr<ApplyNode> lifted =
        ApplyNode::create(node.op(), std::move(inputs), node.attrs(), node.provenance());
    outer_rows[value.node()] = lifted->output(0);
    return lifted->output(0);
  };

  // The new body reads each frontier value as a sequence row (one tap, 0), after the others.
  ScanLayout changed = layout;
  std::vector<Variable> new_sequences;
  std::vector<Variable> placeholders;
  std::vector<std::pair<Variable, Variable>> to_placeholders;
  for (const Variable& value : frontier) {
    new_sequences.push_back(outer_of(value));
    placeholders.push_back(make_input(value.dtype(), value.type().dims,
                                      value.name().empty() ? value.to_string() : value.name(),
                                      std::source_location::current()));
    to_placeholders.emplace_back(value, placeholders.back());
    changed.sequence_taps.push_back({0});
  }
  const auto sequence_taps_end =
      inputs_.begin() + layout.sequence_tap_input(layout.sequence_count(), 0);
  std::vector<Variable> inputs(inputs_.begin(), sequence_taps_end);
  inputs.insert(inputs.end(), placeholders.begin(), placeholders.end());
  inputs.insert(inputs.end(), sequence_taps_end, inputs_.end());

  Hoisted pushed;
  const auto sequences_end = outer_inputs.begin() + 1 + layout.sequence_count();
  pushed.outer_inputs.assign(outer_inputs.begin(), sequences_end);
  pushed.outer_inputs.insert(pushed.outer_inputs.end(), new_sequences.begin(), new_sequences.end());
  pushed.outer_inputs.insert(pushed.outer_inputs.end(), sequences_end, outer_inputs.end());
  pushed.body = std::make_shared<const ScanBody>(std::move(changed), std::move(inputs),
                                                 clone_with(outputs_, to_placeholders));
  return pushed;
}

}  // namespace tscope::runtime
