// SPDX-License-Identifier: Apache-2.0
// The fixed-point driver of local rules. One worklist in topological order; a listener on the
// graph adds the nodes that join it and the readers whose inputs change, so one sweep reaches the
// fixed point without re-sorting the graph after each change.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "tscope/core/error.h"
#include "tscope/rewrite/rule.h"

namespace tscope::rewrite {
namespace {

class Worklist final : public GraphListener {
 public:
  explicit Worklist(FunctionGraph& graph) : graph_(graph) {
    for (ApplyNode* node : graph.toposort()) push(node);
    graph_.add_listener(this);
  }
  ~Worklist() override { graph_.remove_listener(this); }
  Worklist(const Worklist&) = delete;
  Worklist& operator=(const Worklist&) = delete;

  void on_import(ApplyNode& node) override { push(&node); }
  void on_change_input(ApplyNode& node, int, const Variable&, const Variable&) override {
    push(&node);
  }

  /// The next node still in the graph, or null when the work is done.
  ApplyNode* pop() {
    while (next_ < pending_.size()) {
      ApplyNode* node = pending_[next_++];
      queued_.erase(node);
      if (graph_.contains(*node)) return node;
    }
    return nullptr;
  }

 private:
  void push(ApplyNode* node) {
    if (queued_.insert(node).second) pending_.push_back(node);
  }

  FunctionGraph& graph_;
  std::vector<ApplyNode*> pending_;
  std::size_t next_ = 0;
  std::unordered_set<const ApplyNode*> queued_;
};

// Replaces the node's outputs; false when every replacement keeps its output.
bool apply_replacements(FunctionGraph& graph, ApplyNode& node, const Replacements& replacements,
                        std::string_view rule) {
  TSCOPE_CHECK(replacements.size() == static_cast<std::size_t>(node.num_outputs()),
               fmt::format("rewrite {} returned {} replacements for {} with {} outputs", rule,
                           replacements.size(), node.describe(), node.num_outputs()));
  bool changed = false;
  const std::vector<Variable> outputs = node.outputs();
  for (std::size_t i = 0; i < replacements.size(); ++i) {
    if (!replacements[i].defined() || replacements[i] == outputs[i]) continue;
    graph.replace(outputs[i], replacements[i]);
    changed = true;
  }
  return changed;
}

}  // namespace

void apply_to_fixed_point(FunctionGraph& graph, std::span<const LocalRule> rules, Clock& clock,
                          std::vector<RuleReport>& reports) {
  const std::size_t first_report = reports.size();
  std::unordered_map<const OpDef*, std::vector<std::size_t>> rules_by_op;
  for (std::size_t r = 0; r < rules.size(); ++r) {
    reports.push_back({std::string(rules[r].name)});
    for (const OpDef* op : rules[r].tracks) rules_by_op[op].push_back(r);
  }
  Worklist worklist(graph);
  ChangeCounter counter(graph);  // not const: the graph calls it back
  // A rule set that keeps changing a graph is a bug; this bound is far above any real rewrite
  // (each change replaces a node, and every rule only simplifies or fuses).
  const std::int64_t change_limit = 64 * static_cast<std::int64_t>(graph.node_count()) + 1024;
  std::int64_t total_changes = 0;
  while (ApplyNode* node = worklist.pop()) {
    const auto found = rules_by_op.find(&node->op());
    if (found == rules_by_op.end()) continue;
    for (const std::size_t r : found->second) {
      RuleReport& report = reports[first_report + r];
      const std::int64_t created_before = counter.created;
      const std::int64_t removed_before = counter.removed;
      const std::int64_t start_ns = clock.now_ns();
      const Replacements replacements = rules[r].transform(graph, *node);
      const bool changed =
          !replacements.empty() && apply_replacements(graph, *node, replacements, rules[r].name);
      report.duration_ns += clock.now_ns() - start_ns;
      ++report.attempts;
      if (!changed) continue;
      ++report.changes;
      report.nodes_created += counter.created - created_before;
      report.nodes_removed += counter.removed - removed_before;
      if (++total_changes > change_limit) {
        throw_error(ErrorKind::Internal,
                    "rewrite rules did not reach a fixed point after {} changes; the last was {} "
                    "on {}",
                    total_changes, rules[r].name, node->describe());
      }
      break;  // the node left the graph; its replacement is on the worklist
    }
  }
}

}  // namespace tscope::rewrite
