// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Local rewrite rules and the driver that applies them to a fixed point.
///
/// A local rule looks at one node of an op it tracks and either returns replacements for the
/// node's outputs or nothing. It never mutates the graph itself: the driver replaces, so the
/// clients index, the worklist and the per-rule figures stay right. Rules are declared against
/// `const OpDef*` (resolved once, when the pipeline is built) and use the helpers in pattern.h.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tscope/core/clock.h"
#include "tscope/graph/function_graph.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

/// Replacements for every output of the node a rule looked at, in output order; an empty vector
/// means "no change". An undefined entry keeps that output as it is.
using Replacements = std::vector<Variable>;

struct LocalRule {
  std::string_view name;
  /// The ops whose nodes the rule looks at; the driver calls it for no other node.
  std::vector<const OpDef*> tracks;
  /// Reads the graph (clients, outputs) but never changes it.
  Replacements (*transform)(const FunctionGraph& graph, ApplyNode& node) = nullptr;
};

/// What one rule (local or a whole-graph pass) did while the function was compiled.
struct RuleReport {
  std::string name;
  std::int64_t duration_ns = 0;
  std::int64_t attempts = 0;  ///< nodes it looked at
  std::int64_t changes = 0;   ///< nodes it replaced (or merged)
  std::int64_t nodes_created = 0;
  std::int64_t nodes_removed = 0;
};

/// Applies `rules` until none changes anything (Theano's EquilibriumOptimizer in spirit): nodes are
/// visited in topological order, and a node is visited again whenever one of its inputs changes;
/// new nodes are visited when they join. For each node the rules tracking its op are tried in
/// order until one applies. Appends one report per rule to `reports`. Throws Internal when the
/// rules keep changing the graph (a pair of rules undoing each other), naming the last rule.
void apply_to_fixed_point(FunctionGraph& graph, std::span<const LocalRule> rules, Clock& clock,
                          std::vector<RuleReport>& reports);

/// Counts nodes joining and leaving a graph while it is registered (the figures of a report).
class ChangeCounter final : public GraphListener {
 public:
  explicit ChangeCounter(FunctionGraph& graph) : graph_(graph) { graph_.add_listener(this); }
  ~ChangeCounter() override { graph_.remove_listener(this); }
  ChangeCounter(const ChangeCounter&) = delete;
  ChangeCounter& operator=(const ChangeCounter&) = delete;

  void on_import(ApplyNode&) override { ++created; }
  void on_prune(ApplyNode&) override { ++removed; }

  std::int64_t created = 0;
  std::int64_t removed = 0;

 private:
  FunctionGraph& graph_;
};

}  // namespace tscope::rewrite

#pragma GCC visibility pop
