// SPDX-License-Identifier: Apache-2.0
// fuse_elementwise: groups of elementwise nodes (and a Sum or Max over them) become Composite
// nodes. The walk goes from the outputs back: each node not yet in a group that can start one is
// the root of a new group, which then takes in producers whose every reader is already in it,
// latest producers first, so a producer is judged only after all of its readers that could join.
#include <algorithm>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tscope/ops/registry.h"
#include "tscope/rewrite/fusion_rules.h"

namespace tscope::rewrite {
namespace {

bool is_float(DType dtype) { return dtype == DType::Float32 || dtype == DType::Float64; }

// An elementwise node that a Composite can evaluate: block kernels, one float dtype throughout,
// and no attributes (an in-place or cast variant is not the plain op).
bool is_fusable(const ApplyNode& node) {
  const OpDef& op = node.op();
  if (!op.traits.elementwise || !op.block.available() || node.num_outputs() != 1 ||
      !node.attrs().empty()) {
    return false;
  }
  const DType dtype = node.output_node(0).type.dtype;
  if (!is_float(dtype)) return false;
  return std::ranges::all_of(node.inputs(),
                             [&](const Variable& input) { return input.dtype() == dtype; });
}

// The Composite "reduce" attribute of a Sum or Max whose dtype a Composite keeps; empty otherwise.
std::string_view reduction_of(const ApplyNode& node) {
  if (node.num_inputs() != 1 || !is_float(node.input(0).dtype()) ||
      node.output_node(0).type.dtype != node.input(0).dtype()) {
    return {};
  }
  if (node.op().name == "Sum") return "add";
  if (node.op().name == "Max") return "maximum";
  return {};
}

constexpr std::size_t kUserOpsNamed = 4;
// Nodes in one Composite at most. Past a few dozen ops the tile's temporaries leave the cache and
// nothing more is saved; the bound also keeps the expression's nesting (and the recursion that
// writes and parses it) shallow on chains of thousands of nodes. The rest of a longer chain
// starts a group of its own.
constexpr std::size_t kMaxFusedNodes = 64;

struct Group {
  const ApplyNode* top = nullptr;        // the elementwise node computing the group's value
  const ApplyNode* reduction = nullptr;  // a Sum or Max reading only `top`, or none
  std::vector<const ApplyNode*> members;  // in topological order, `top` last
};

// The root's creation site, and the user ops of every fused node (the root's first, each once), so
// the profile row of a Composite still names everything it computes.
Provenance fused_provenance(const ApplyNode& root, const Group& group) {
  std::vector<std::string> user_ops{root.provenance().user_op};
  for (auto it = group.members.rbegin(); it != group.members.rend(); ++it) {
    const std::string& user_op = (*it)->provenance().user_op;
    if (!user_op.empty() && std::ranges::find(user_ops, user_op) == user_ops.end()) {
      user_ops.push_back(user_op);
    }
  }
  Provenance provenance = root.provenance();
  const std::size_t named = std::min(user_ops.size(), kUserOpsNamed);
  provenance.user_op = fmt::format("{}", fmt::join(user_ops.begin(), user_ops.begin() + static_cast<std::ptrdiff_t>(named), " + "));
  if (user_ops.size() > named) {
    provenance.user_op += fmt::format(" + {} more", user_ops.size() - named);
  }
  return provenance;
}

class Fuser {
 public:
  explicit Fuser(FunctionGraph& graph) : graph_(graph), order_(graph.toposort()) {
    for (std::size_t i = 0; i < order_.size(); ++i) position_[order_[i]] = i;
  }

  std::int64_t run() {
    std::int64_t fused = 0;
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      ApplyNode* node = *it;
      if (taken_.contains(node)) continue;
      Group group;
      if (!reduction_of(*node).empty()) {
        const ApplyNode* producer = node->input(0).owner();
        if (producer == nullptr || !joins(*producer, {node})) continue;
        group.top = producer;
        group.reduction = node;
      } else if (is_fusable(*node)) {
        group.top = node;
      } else {
        continue;
      }
      grow(group);
      // A lone elementwise node gains nothing; a reduction of one node saves its stored value.
      if (group.members.size() < 2 && group.reduction == nullptr) continue;
      if (replace_with_composite(group)) ++fused;
    }
    return fused;
  }

 private:
  // Whether `node` may join a group already holding `members`: fusable, not in another group, not
  // a graph output, and read only by the group.
  bool joins(const ApplyNode& node, const std::unordered_set<const ApplyNode*>& members) const {
    if (taken_.contains(&node) || !is_fusable(node)) return false;
    // A graph output (a client without a node) is read outside any group.
    return std::ranges::all_of(graph_.clients(node.output(0)), [&](const Client& client) {
      return !client.is_output() && members.contains(client.node);
    });
  }

  void grow(Group& group) {
    std::unordered_set<const ApplyNode*> members{group.top};
    auto later_first = [&](const ApplyNode* a, const ApplyNode* b) {
      return position_.at(a) < position_.at(b);
    };
    std::priority_queue<const ApplyNode*, std::vector<const ApplyNode*>, decltype(later_first)>
        candidates(later_first);
    auto push_producers = [&](const ApplyNode& node) {
      for (const Variable& input : node.inputs()) {
        if (input.owner() != nullptr) candidates.push(input.owner());
      }
    };
    push_producers(*group.top);
    while (!candidates.empty() && members.size() < kMaxFusedNodes) {
      const ApplyNode* candidate = candidates.top();
      candidates.pop();
      if (members.contains(candidate) || !joins(*candidate, members)) continue;
      members.insert(candidate);
      push_producers(*candidate);
    }
    group.members.assign(members.begin(), members.end());
    std::ranges::sort(group.members, later_first);
  }

  bool replace_with_composite(const Group& group) {
    std::unordered_set<const VariableNode*> internal;
    for (const ApplyNode* member : group.members) internal.insert(&member->output_node(0));
    // The group's inputs, each once, in order of first use.
    std::vector<Variable> inputs;
    std::unordered_map<const VariableNode*, int> input_index;
    std::unordered_map<const VariableNode*, int> uses;
    for (const ApplyNode* member : group.members) {
      for (const Variable& input : member->inputs()) {
        ++uses[input.node()];
        if (internal.contains(input.node()) || input_index.contains(input.node())) continue;
        input_index[input.node()] = static_cast<int>(inputs.size());
        inputs.push_back(input);
      }
    }
    // Nested calls; a value read twice inside the group becomes a statement read back as t<j>.
    std::vector<std::string> statements;
    std::unordered_map<const VariableNode*, int> statement_of;
    auto emit = [&](auto& self, const Variable& value) -> std::string {
      if (const auto found = input_index.find(value.node()); found != input_index.end()) {
        return fmt::format("i{}", found->second);
      }
      if (const auto found = statement_of.find(value.node()); found != statement_of.end()) {
        return fmt::format("t{}", found->second);
      }
      const ApplyNode& node = *value.owner();
      std::vector<std::string> operands;
      for (const Variable& input : node.inputs()) operands.push_back(self(self, input));
      std::string call = fmt::format("{}({})", node.op().name, fmt::join(operands, ","));
      if (uses[value.node()] < 2) return call;
      statement_of[value.node()] = static_cast<int>(statements.size());
      statements.push_back(std::move(call));
      return fmt::format("t{}", statements.size() - 1);
    };
    statements.push_back(emit(emit, group.top->output(0)));
    Attrs attrs{{"expression", fmt::format("{}", fmt::join(statements, ";"))}};
    const ApplyNode& root = group.reduction != nullptr ? *group.reduction : *group.top;
    if (group.reduction != nullptr) {
      attrs.set("reduce", std::string(reduction_of(*group.reduction)));
      attrs.set("axes", group.reduction->attrs().get_ints("axes"));
      attrs.set("keepdims", group.reduction->attrs().get_bool_or("keepdims", false));
    }
    const auto composite = ApplyNode::create(op_def("Composite"), inputs, std::move(attrs),
                                             fused_provenance(root, group));
    if (!(composite->output(0).type() == root.output(0).type())) return false;
    graph_.replace(root.output(0), composite->output(0));
    for (const ApplyNode* member : group.members) taken_.insert(member);
    taken_.insert(&root);
    return true;
  }

  FunctionGraph& graph_;
  std::vector<ApplyNode*> order_;
  std::unordered_map<const ApplyNode*, std::size_t> position_;
  std::unordered_set<const ApplyNode*> taken_;
};

}  // namespace

std::int64_t fuse_elementwise(FunctionGraph& graph) { return Fuser(graph).run(); }

}  // namespace tscope::rewrite
