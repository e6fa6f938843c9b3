// SPDX-License-Identifier: Apache-2.0
// fuse_elementwise: groups of elementwise nodes (and a Sum or Max over them) become Composite
// nodes. The walk goes from the outputs back: each node not yet in a group that can start one is
// the root of a new group, which then takes in producers whose every reader is already in it,
// latest producers first, so a producer is judged only after all of its readers that could join.
// A reduction group also takes a producer read by sibling reductions (same kind, axes and shape),
// directly or through an elementwise node read only by one: those become more roots, and the
// group one Composite with an output per root, so the shared value is computed once and never
// stored (sum(exp(x) * w) and sum(exp(x)) in one pass).
#include <algorithm>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tscope/ops/registry.h"
#include "tscope/rewrite/fusion_role.h"
#include "tscope/rewrite/fusion_rules.h"

namespace tscope::rewrite {
namespace {

bool is_float(DType dtype) { return dtype == DType::Float32 || dtype == DType::Float64; }

// The float dtype an elementwise node computes in when a Composite evaluates it, or none. A
// Composite holds every value in one float dtype, so:
//  - an arithmetic op (block kernels, no attributes) needs its inputs and output in that dtype;
//  - a comparison's block kernel gives 1 or 0 in the dtype of its float inputs; its bool output
//    must stay inside the group (joins() sees to that: a group's outputs are float);
//  - a Cast to a float dtype of a bool value keeps that 1 or 0 (its block kernel is the
//    identity); its input must be computed inside the group (checked once the group is grown).
// This admits the masks of ReLU gradients, g * cast(x >= 0), into the group of their product.
std::optional<DType> computes_in(const ApplyNode& node) {
  const OpDef& op = node.op();
  if (!op.traits.elementwise || !op.block.available() || node.num_outputs() != 1) return {};
  const DType output = node.output_node(0).type.dtype;
  if (op.name == "Cast") {
    if (!is_float(output) || node.input(0).dtype() != DType::Bool) return {};
    return output;
  }
  // Attributes make another op of it (a cast's dtype); the in-place mark of use_inplace, which
  // runs after fusion, is only seen when fusion_role() describes a compiled graph.
  const bool plain = std::ranges::all_of(
      node.attrs().values(), [](const auto& entry) { return entry.first == "inplace"; });
  if (!plain || node.num_inputs() == 0) return {};
  const DType dtype = node.input(0).dtype();
  if (!is_float(dtype) || (output != dtype && output != DType::Bool)) return {};
  if (!std::ranges::all_of(node.inputs(),
                           [&](const Variable& input) { return input.dtype() == dtype; })) {
    return {};
  }
  return dtype;
}

// Whether `node` can compute a group's value: it computes in its own (float) output dtype.
bool is_fusable(const ApplyNode& node) {
  const std::optional<DType> dtype = computes_in(node);
  return dtype.has_value() && *dtype == node.output_node(0).type.dtype;
}

// Whether `node` can compute a value of a group computing in `dtype`.
bool is_fusable_in(const ApplyNode& node, DType dtype) {
  return is_fusable(node) && node.output_node(0).type.dtype == dtype;
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

// One value a group computes: an elementwise node's, or a reduction of it.
struct Root {
  const ApplyNode* top = nullptr;        // the elementwise node computing the value
  const ApplyNode* reduction = nullptr;  // a Sum or Max reading only `top`, or none
  [[nodiscard]] const ApplyNode& node() const { return reduction != nullptr ? *reduction : *top; }
};

struct Group {
  std::vector<Root> roots;                // the first started the group; more only if it reduces
  std::vector<const ApplyNode*> members;  // elementwise nodes in topological order
  [[nodiscard]] const ApplyNode* reduction() const { return roots.front().reduction; }
};

// The first root's creation site, and the user ops of every fused node (the roots' first, each
// once), so the profile row of a Composite still names everything it computes.
Provenance fused_provenance(const Group& group) {
  const ApplyNode& root = group.roots.front().node();
  std::vector<std::string> user_ops;
  for (const Root& each : group.roots) {
    const std::string& user_op = each.node().provenance().user_op;
    if ((user_ops.empty() || !user_op.empty()) &&
        std::ranges::find(user_ops, user_op) == user_ops.end()) {
      user_ops.push_back(user_op);
    }
  }
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
        if (producer == nullptr || !is_fusable(*producer) ||
            !joins(*producer, {node}, producer->output_node(0).type.dtype)) {
          continue;
        }
        group.roots.push_back({producer, node});
      } else if (is_fusable(*node)) {
        group.roots.push_back({node, nullptr});
      } else {
        continue;
      }
      grow(group, true);
      if (group.roots.size() > 1 && reads_own_result(group)) {
        // Layer-norm style: a member reads a value derived from a sibling's result (x - mean).
        group.roots.resize(1);
        grow(group, false);
      }
      if (!leave_out_casts_of_outside_values(group)) continue;
      // A lone elementwise node gains nothing; a reduction of one node saves its stored value.
      if (group.members.size() < 2 && group.reduction() == nullptr) continue;
      if (replace_with_composite(group)) ++fused;
    }
    return fused;
  }

 private:
  // Whether `node` may join a group already holding `members`: fusable, not in another group, not
  // a graph output, and read only by the group.
  bool joins(const ApplyNode& node, const std::unordered_set<const ApplyNode*>& members,
             DType dtype) const {
    if (taken_.contains(&node) || computes_in(node) != dtype) return false;
    // A graph output (a client without a node) is read outside any group.
    return std::ranges::all_of(graph_.clients(node.output(0)), [&](const Client& client) {
      return !client.is_output() && members.contains(client.node);
    });
  }

  // Whether `node` is a reduction that computes alongside `root`'s: the same op and attributes
  // over a value of the same static shape, and not in another group.
  bool is_sibling(const ApplyNode& node, const Root& root) const {
    return !taken_.contains(&node) && !reduction_of(node).empty() &&
           &node.op() == &root.reduction->op() && node.attrs() == root.reduction->attrs() &&
           node.input(0).type().dims == root.top->output(0).type().dims;
  }

  // The roots that `candidate`'s readers outside `inside` would add to a reduction group: each
  // such reader a sibling reduction of `candidate`, or a fusable node read only by one. Empty
  // when some reader is neither (then `candidate` cannot join).
  std::vector<Root> sibling_roots(const ApplyNode& candidate,
                                  const std::unordered_set<const ApplyNode*>& inside,
                                  const Root& first) const {
    std::vector<Root> roots;
    for (const Client& client : graph_.clients(candidate.output(0))) {
      if (client.is_output()) return {};
      if (inside.contains(client.node)) continue;
      if (std::ranges::any_of(roots, [&](const Root& root) { return &root.node() == client.node; })) {
        continue;
      }
      Root root{&candidate, client.node};
      if (!is_sibling(*client.node, first)) {
        // An elementwise reader whose only reader is a sibling reduction.
        const ApplyNode& reader = *client.node;
        const auto& next = graph_.clients(reader.output(0));
        if (taken_.contains(&reader) ||
            !is_fusable_in(reader, first.top->output_node(0).type.dtype) || next.size() != 1 ||
            next.front().is_output() || !is_sibling(*next.front().node, first)) {
          return {};
        }
        root = {&reader, next.front().node};
      }
      roots.push_back(root);
    }
    return roots;
  }

  // A node's place in the order the walk started from; a Composite made since (a sibling root's
  // reader may read one) counts as the latest.
  std::size_t position_of(const ApplyNode* node) const {
    const auto found = position_.find(node);
    return found != position_.end() ? found->second : order_.size();
  }

  // Whether a value the group reads depends on one of its roots' results, which would make the
  // Composite its own ancestor. Only nodes after the earliest root can depend on one.
  bool reads_own_result(const Group& group) const {
    std::unordered_set<const ApplyNode*> roots;
    std::size_t earliest = order_.size();
    for (const Root& root : group.roots) {
      roots.insert(&root.node());
      earliest = std::min(earliest, position_of(&root.node()));
    }
    const std::unordered_set<const ApplyNode*> members(group.members.begin(), group.members.end());
    std::vector<const ApplyNode*> stack;
    std::unordered_set<const ApplyNode*> seen;
    for (const ApplyNode* member : group.members) {
      for (const Variable& input : member->inputs()) {
        if (input.owner() != nullptr && !members.contains(input.owner())) stack.push_back(input.owner());
      }
    }
    while (!stack.empty()) {
      const ApplyNode* node = stack.back();
      stack.pop_back();
      if (roots.contains(node)) return true;
      if (position_of(node) < earliest || !seen.insert(node).second) continue;
      for (const Variable& input : node->inputs()) {
        if (input.owner() != nullptr) stack.push_back(input.owner());
      }
    }
    return false;
  }

  void grow(Group& group, bool with_siblings) {
    // Nodes whose values the group computes or reads inside: members and root reductions.
    std::unordered_set<const ApplyNode*> inside{group.roots.front().top};
    std::unordered_set<const ApplyNode*> members{group.roots.front().top};
    if (group.reduction() != nullptr) inside.insert(group.reduction());
    auto later_first = [&](const ApplyNode* a, const ApplyNode* b) {
      return position_of(a) < position_of(b);
    };
    std::priority_queue<const ApplyNode*, std::vector<const ApplyNode*>, decltype(later_first)>
        candidates(later_first);
    auto push_producers = [&](const ApplyNode& node) {
      for (const Variable& input : node.inputs()) {
        if (input.owner() != nullptr) candidates.push(input.owner());
      }
    };
    push_producers(*group.roots.front().top);
    const DType dtype = group.roots.front().top->output_node(0).type.dtype;
    while (!candidates.empty() && members.size() < kMaxFusedNodes) {
      const ApplyNode* candidate = candidates.top();
      candidates.pop();
      if (members.contains(candidate)) continue;
      if (!joins(*candidate, inside, dtype)) {
        if (!with_siblings || group.reduction() == nullptr || taken_.contains(candidate) ||
            !is_fusable_in(*candidate, dtype)) {
          continue;
        }
        const std::vector<Root> more = sibling_roots(*candidate, inside, group.roots.front());
        if (more.empty() || members.size() + more.size() + 1 > kMaxFusedNodes) continue;
        for (const Root& root : more) {
          group.roots.push_back(root);
          inside.insert(root.reduction);
          if (root.top != candidate) {
            inside.insert(root.top);
            members.insert(root.top);
            push_producers(*root.top);
          }
        }
      }
      inside.insert(candidate);
      members.insert(candidate);
      push_producers(*candidate);
    }
    group.members.assign(members.begin(), members.end());
    std::ranges::sort(group.members, later_first);
  }

  // Leaves out the Casts whose bool input the group does not compute: a Composite's inputs are of
  // its float dtype. Nothing in the group produced that input, so nothing else leaves with them.
  // False when the group's value itself is such a Cast (no group then).
  static bool leave_out_casts_of_outside_values(Group& group) {
    const std::unordered_set<const ApplyNode*> members(group.members.begin(), group.members.end());
    auto reads_outside_bool = [&](const ApplyNode* member) {
      return member->op().name == "Cast" && !members.contains(member->input(0).owner());
    };
    for (const Root& root : group.roots) {
      if (reads_outside_bool(root.top)) return false;
    }
    std::erase_if(group.members, reads_outside_bool);
    return true;
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
    // An output is a statement of its own, so a root's value also read inside gets one early.
    for (const Root& root : group.roots) ++uses[&root.top->output_node(0)];
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
      if (!internal.contains(value.node())) {
        // Computed outside the group: read as an input, so the expression (and this recursion)
        // never reaches past the group's members.
        input_index[value.node()] = static_cast<int>(inputs.size());
        inputs.push_back(value);
        return fmt::format("i{}", inputs.size() - 1);
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
    std::vector<std::int64_t> outputs;
    for (const Root& root : group.roots) {
      const Variable value = root.top->output(0);
      std::string text = emit(emit, value);
      if (const auto found = statement_of.find(value.node()); found != statement_of.end()) {
        outputs.push_back(found->second);
      } else {
        outputs.push_back(static_cast<std::int64_t>(statements.size()));
        statements.push_back(std::move(text));
      }
    }
    Attrs attrs{{"expression", fmt::format("{}", fmt::join(statements, ";"))}};
    const bool last_statement_only =
        outputs.size() == 1 && outputs.front() + 1 == static_cast<std::int64_t>(statements.size());
    if (!last_statement_only) attrs.set("outputs", outputs);
    if (const ApplyNode* reduction = group.reduction(); reduction != nullptr) {
      attrs.set("reduce", std::string(reduction_of(*reduction)));
      attrs.set("axes", reduction->attrs().get_ints("axes"));
      attrs.set("keepdims", reduction->attrs().get_bool_or("keepdims", false));
    }
    const auto composite = ApplyNode::create(op_def("Composite"), inputs, std::move(attrs),
                                             fused_provenance(group));
    for (std::size_t o = 0; o < group.roots.size(); ++o) {
      if (!(composite->output(static_cast<int>(o)).type() ==
            group.roots[o].node().output(0).type())) {
        return false;
      }
    }
    for (std::size_t o = 0; o < group.roots.size(); ++o) {
      graph_.replace(group.roots[o].node().output(0), composite->output(static_cast<int>(o)));
    }
    for (const ApplyNode* member : group.members) taken_.insert(member);
    for (const Root& root : group.roots) taken_.insert(&root.node());
    return true;
  }

  FunctionGraph& graph_;
  std::vector<ApplyNode*> order_;
  std::unordered_map<const ApplyNode*, std::size_t> position_;
  std::unordered_set<const ApplyNode*> taken_;
};

}  // namespace

std::int64_t fuse_elementwise(FunctionGraph& graph) { return Fuser(graph).run(); }

std::string_view fusion_role(const ApplyNode& node) {
  if (node.op().name == "Composite") {
    return node.attrs().has("reduce") ? "reduction" : "elementwise";
  }
  if (computes_in(node).has_value()) return "elementwise";
  if (!reduction_of(node).empty()) return "reduction";
  return "none";
}

}  // namespace tscope::rewrite
