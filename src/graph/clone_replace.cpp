// SPDX-License-Identifier: Apache-2.0
#include "tscope/graph/clone_replace.h"

#include <unordered_map>
#include <unordered_set>

#include "tscope/graph/apply.h"

namespace tscope {
namespace {

class Rebuilder {
 public:
  explicit Rebuilder(const std::vector<std::pair<Variable, Variable>>& replacements) {
    for (const auto& [key, value] : replacements) {
      if (key.dtype() != value.dtype() || key.rank() != value.rank()) {
        throw_error(ErrorKind::TypeMismatch,
                    "clone_replace: '{}' of type {} is replaced by '{}' of type {}; expected the "
                    "same dtype and rank",
                    key.to_string(), key.type().to_string(), value.to_string(),
                    value.type().to_string());
      }
      rebuilt_[key.node()] = value;
    }
  }

  // Iterative post-order over the node's ancestors, so that a deep chain cannot exhaust the stack.
  Variable rebuild(const Variable& root) {
    std::vector<std::pair<Variable, bool>> stack{{root, false}};
    while (!stack.empty()) {
      auto [value, inputs_done] = stack.back();
      stack.pop_back();
      if (rebuilt_.count(value.node()) != 0) {
        used_.insert(value.node());
        continue;
      }
      ApplyNode* owner = value.owner();
      if (owner == nullptr) {
        rebuilt_[value.node()] = value;
        continue;
      }
      if (!inputs_done) {
        stack.emplace_back(value, true);
        for (const Variable& input : owner->inputs()) stack.emplace_back(input, false);
        continue;
      }
      rebuilt_[value.node()] = rebuilt_output(*owner, value.node()->output_index);
    }
    return rebuilt_.at(root.node());
  }

  [[nodiscard]] bool used(const Variable& key) const { return used_.count(key.node()) != 0; }

 private:
  Variable rebuilt_output(const ApplyNode& owner, int index) {
    auto found = rebuilt_nodes_.find(&owner);
    if (found == rebuilt_nodes_.end()) {
      std::vector<Variable> inputs;
      bool changed = false;
      for (const Variable& input : owner.inputs()) {
        inputs.push_back(rebuilt_.at(input.node()));
        changed = changed || !(inputs.back() == input);
      }
      std::shared_ptr<ApplyNode> node =
          changed ? ApplyNode::create(owner.op(), std::move(inputs), owner.attrs(),
                                      owner.provenance())
                  : std::const_pointer_cast<ApplyNode>(owner.shared_from_this());
      found = rebuilt_nodes_.emplace(&owner, std::move(node)).first;
    }
    return found->second->output(index);
  }

  std::unordered_map<const VariableNode*, Variable> rebuilt_;
  std::unordered_map<const ApplyNode*, std::shared_ptr<ApplyNode>> rebuilt_nodes_;
  std::unordered_set<const VariableNode*> used_;
};

}  // namespace

std::vector<Variable> clone_replace(
    const std::vector<Variable>& outputs,
    const std::vector<std::pair<Variable, Variable>>& replacements) {
  if (replacements.empty()) return outputs;
  Rebuilder rebuilder(replacements);
  std::vector<Variable> result;
  result.reserve(outputs.size());
  for (const Variable& output : outputs) result.push_back(rebuilder.rebuild(output));
  for (const auto& [key, value] : replacements) {
    if (!rebuilder.used(key)) {
      throw_error(ErrorKind::InvalidArgument,
                  "clone_replace: '{}' is not in the graph of the outputs; a replaced Variable "
                  "must be one they depend on",
                  key.to_string());
    }
  }
  return result;
}

}  // namespace tscope
