// SPDX-License-Identifier: Apache-2.0
// The rewrite push_out_accumulated_products's copy of a body (Theano's scan push-out of dot
// accumulations): a fed-back output that only sums matrix products, s[t] = s[t-1] + a[t] . b[t],
// and of which only the final value is read, leaves the loop. The loop stacks every step's a and
// b instead, and after it one product over all steps' rows gives the sum:
//   s[n-1] = s0 + sum_t a[t] . b[t] = s0 + [a[0] ... a[n-1]] . [b[0]; ...; b[n-1]].
// The backward loop of a recurrent layer sums each weight's gradient this way (x[t]^T . g[t]);
// one product with steps x batch rows replaces a thin product, and a pass over the whole weight
// matrix, at every step.
#include <algorithm>
#include <unordered_map>

#include "../static_dims.h"
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

bool is_matrix_product(const ApplyNode& node) {
  return (node.op().name == "Dot" || node.op().name == "Dot22") && node.num_inputs() == 2 &&
         node.input(0).rank() == 2 && node.input(1).rank() == 2;
}

bool is_transpose(const ApplyNode* node) {
  return node != nullptr && node->op().name == "DimShuffle" && node->input(0).rank() == 2 &&
         node->attrs().get_ints("pattern") == std::vector<std::int64_t>{1, 0};
}

// One output to push out: the step's product a . b added to the state row.
struct Accumulation {
  int output = -1;
  /// What the new loop stacks for the left factor: a itself, or p where a = p^T.
  Variable left;
  bool left_transposed = false;
  Variable right;
  const ApplyNode* sum = nullptr;  // the add, whose provenance the outer nodes take
};

// (steps, rows, cols) as (steps * rows, cols). `cols` is the state's extent rather than the
// stack's: a loop that ran no step stacks nothing, and its empty stack's row shape is only what
// the value's type knows.
Variable steps_as_rows(const Variable& stacked, const Variable& cols) {
  return reshape(stacked, stack({shape_i(stacked, 0) * shape_i(stacked, 1), cols}, 0));
}

}  // namespace

std::optional<LoopBody::Reshaped> ScanBody::push_out_accumulated_products(
    const std::vector<Variable>& outer_inputs) const {
  const ScanLayout& layout = layout_;
  const std::vector<ApplyNode*> order = ancestors_in_topological_order(outputs_);
  // How many times each value is read: by body nodes, and as a body output.
  std::unordered_map<const VariableNode*, int> reads;
  for (const ApplyNode* node : order) {
    for (const Variable& input : node->inputs()) ++reads[input.node()];
  }
  for (const Variable& output : outputs_) ++reads[output.node()];

  std::vector<Accumulation> found;
  for (int o = 0; o < static_cast<int>(layout.outputs.size()); ++o) {
    const ScanLayout::Output& output = layout.outputs[static_cast<std::size_t>(o)];
    if (!output.last_only || output.taps != std::vector<std::int64_t>{-1}) continue;
    const Variable& state = inputs_[static_cast<std::size_t>(layout.state_tap_input(o, 0))];
    const Variable& next = outputs_[static_cast<std::size_t>(o)];
    const ApplyNode* sum = next.owner();
    if (sum == nullptr || sum->op().name != "Add" || sum->num_inputs() != 2 ||
        !is_floating(next.dtype()) || next.rank() != 2 || reads[state.node()] != 1 ||
        reads[next.node()] != 1) {
      continue;
    }
    const int state_side = sum->input(0) == state ? 0 : (sum->input(1) == state ? 1 : -1);
    if (state_side < 0) continue;
    const Variable& product = sum->input(1 - state_side);
    const ApplyNode* dot_node = product.owner();
    // The product is read by the sum alone, and has the state's shape (no broadcasting); the
    // loop's checks hold the step's output to the state's shape.
    if (dot_node == nullptr || !is_matrix_product(*dot_node) || reads[product.node()] != 1 ||
        product.dtype() != state.dtype() ||
        !dims_compatible(product.type().dims, state.type().dims)) {
      continue;
    }
    Accumulation accumulation{o, dot_node->input(0), false, dot_node->input(1), sum};
    if (is_transpose(accumulation.left.owner())) {
      accumulation.left = accumulation.left.owner()->input(0);
      accumulation.left_transposed = true;
    }
    found.push_back(accumulation);
  }
  if (found.empty()) return std::nullopt;

  auto pushed = [&](int o) {
    return std::any_of(found.begin(), found.end(),
                       [o](const Accumulation& a) { return a.output == o; });
  };
  // The new loop: the pushed outputs, their state inputs and initial values gone; two stacked
  // outputs each after the remaining step outputs (and before a while loop's condition).
  ScanLayout changed = layout;
  changed.outputs.clear();
  std::vector<Variable> inputs(
      inputs_.begin(), inputs_.begin() + layout.sequence_tap_input(layout.sequence_count(), 0));
  std::vector<Variable> outputs;
  std::vector<Variable> outer(outer_inputs.begin(),
                              outer_inputs.begin() + 1 + layout.sequence_count());
  std::vector<int> new_index(layout.outputs.size(), -1);
  for (int o = 0; o < static_cast<int>(layout.outputs.size()); ++o) {
    if (pushed(o)) continue;
    const ScanLayout::Output& output = layout.outputs[static_cast<std::size_t>(o)];
    new_index[static_cast<std::size_t>(o)] = static_cast<int>(changed.outputs.size());
    changed.outputs.push_back(output);
    outputs.push_back(outputs_[static_cast<std::size_t>(o)]);
    for (std::size_t k = 0; k < output.taps.size(); ++k) {
      inputs.push_back(
          inputs_[static_cast<std::size_t>(layout.state_tap_input(o, static_cast<int>(k)))]);
    }
    if (output.is_state())
      outer.push_back(outer_inputs[static_cast<std::size_t>(layout.initial_input(o))]);
  }
  std::vector<std::pair<int, int>> factor_outputs;  // per accumulation: its stacked left, right
  for (const Accumulation& accumulation : found) {
    const int left = static_cast<int>(changed.outputs.size());
    changed.outputs.push_back({});
    outputs.push_back(accumulation.left);
    changed.outputs.push_back({});
    outputs.push_back(accumulation.right);
    factor_outputs.emplace_back(left, left + 1);
  }
  if (layout.until) outputs.push_back(outputs_.back());
  inputs.insert(inputs.end(), inputs_.begin() + layout.body_non_sequence_input(0), inputs_.end());
  outer.insert(outer.end(), outer_inputs.begin() + layout.non_sequence_input(0),
               outer_inputs.end());

  Reshaped reshaped;
  reshaped.body =
      std::make_shared<const ScanBody>(std::move(changed), std::move(inputs), std::move(outputs));
  reshaped.outer_inputs = std::move(outer);
  std::vector<Variable> initial_rows(found.size());
  for (std::size_t i = 0; i < found.size(); ++i) {
    initial_rows[i] = outer_inputs[static_cast<std::size_t>(layout.initial_input(found[i].output))];
  }
  reshaped.old_outputs = [found, factor_outputs, new_index,
                          initial_rows](const std::vector<Variable>& new_outputs) {
    std::vector<Variable> old(new_index.size());
    for (std::size_t o = 0; o < new_index.size(); ++o) {
      if (new_index[o] >= 0) old[o] = new_outputs[static_cast<std::size_t>(new_index[o])];
    }
    for (std::size_t i = 0; i < found.size(); ++i) {
      const Accumulation& accumulation = found[i];
      // Every node built for it points at the user's code that built the sum.
      const ProvenanceScope scope(accumulation.sum->provenance(), /*forced=*/true);
      const Variable& lefts = new_outputs[static_cast<std::size_t>(factor_outputs[i].first)];
      const Variable& rights = new_outputs[static_cast<std::size_t>(factor_outputs[i].second)];
      // a[t] = p[t]^T, p[t] (rows, k): the sum is P^T . B with steps x rows rows. Otherwise
      // a[t] (m, rows): the steps' a side by side, (m, steps x rows).
      const Variable initial = subtensor(initial_rows[i], {0});
      const Variable m = shape_i(initial, 0);
      const Variable left = accumulation.left_transposed
                                ? transpose(steps_as_rows(lefts, m))
                                : transpose(steps_as_rows(dimshuffle(lefts, {0, 2, 1}), m));
      const Variable total = dot(left, steps_as_rows(rights, shape_i(initial, 1)));
      old[static_cast<std::size_t>(accumulation.output)] = add(initial, total);
    }
    return old;
  };
  return reshaped;
}

}  // namespace tscope::runtime
