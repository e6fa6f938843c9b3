// SPDX-License-Identifier: Apache-2.0
#include "tscope/graph/traversal.h"

#include <algorithm>
#include <unordered_set>

namespace tscope {

std::vector<ApplyNode*> ancestors_in_topological_order(const std::vector<Variable>& outputs) {
  std::vector<ApplyNode*> order;
  std::unordered_set<const ApplyNode*> done;
  struct Frame {
    ApplyNode* node;
    int next_input;
  };
  std::vector<Frame> stack;
  for (const Variable& root : outputs) {
    if (!root.defined() || root.owner() == nullptr || done.count(root.owner()) != 0) continue;
    stack.push_back({root.owner(), 0});
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.next_input < frame.node->num_inputs()) {
        ApplyNode* producer = frame.node->input(frame.next_input++).owner();
        if (producer != nullptr && done.count(producer) == 0) stack.push_back({producer, 0});
        continue;
      }
      ApplyNode* node = frame.node;
      stack.pop_back();
      if (done.insert(node).second) order.push_back(node);
    }
  }
  return order;
}

bool views_constant_data(const Variable& value) { return views_only(value, {}); }

bool views_only(const Variable& value, std::span<const Variable> sources) {
  // Kernels ask this at every loop step; the common answers need no walk.
  if (value.kind() == VariableKind::Constant ||
      std::ranges::find(sources, value) != sources.end()) {
    return true;
  }
  if (value.owner() == nullptr) return false;
  std::vector<Variable> pending{value};
  while (!pending.empty()) {
    const Variable current = pending.back();
    pending.pop_back();
    if (current.kind() == VariableKind::Constant ||
        std::ranges::find(sources, current) != sources.end()) {
      continue;
    }
    const ApplyNode* producer = current.owner();
    if (producer == nullptr) return false;
    const int output = current.node()->output_index;
    const auto& views = producer->op().aliasing.views;
    const bool is_view = std::ranges::any_of(
        views, [output](const std::pair<int, int>& view) { return view.first == output; });
    if (!is_view) return false;
    for (const Variable& input : producer->inputs()) pending.push_back(input);
  }
  return true;
}

}  // namespace tscope
