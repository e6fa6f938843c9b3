// SPDX-License-Identifier: Apache-2.0
#pragma once
/// FunctionGraph: the graph between a function's inputs and outputs, owned by a compiled function
/// (a clone of the user's graph, so rewrites never touch user Variables). Rewrites mutate it
/// through replace(). It keeps a clients index (who reads each value), so rules ask "is this value
/// read once?" in O(1) and replace() rewires only the readers of the replaced value, without
/// walking or re-sorting the graph.
#include <cstddef>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tscope/graph/apply.h"
#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

/// One reader of a value: input `index` of `node`, or, when `node` is null, graph output `index`.
struct Client {
  ApplyNode* node = nullptr;
  int index = 0;
  [[nodiscard]] bool is_output() const noexcept { return node == nullptr; }
  friend bool operator==(const Client&, const Client&) = default;
};

/// Told about every change to a FunctionGraph (the rewrite driver keeps its worklist and its
/// created/removed counts with one). Called after the index is updated.
class GraphListener {
 public:
  virtual ~GraphListener() = default;
  /// `node` became part of the graph (a replacement and the new nodes it reads).
  virtual void on_import(ApplyNode& node) { (void)node; }
  /// `node` left the graph: nothing reads its outputs any more.
  virtual void on_prune(ApplyNode& node) { (void)node; }
  /// Input `index` of `node` now reads `now` instead of `before`.
  virtual void on_change_input(ApplyNode& node, int index, const Variable& before,
                               const Variable& now) {
    (void)node, (void)index, (void)before, (void)now;
  }
};

class FunctionGraph {
 public:
  /// Clones the graph between `inputs` and `outputs`. Inputs become fresh Input variables;
  /// constants and shared variables are kept (they are leaves); every Apply is re-created with the
  /// same op, attrs and provenance. Throws InvalidArgument when an output depends on a graph input
  /// that is not listed (naming the missing input and the node that needs it).
  [[nodiscard]] static FunctionGraph clone_of(const std::vector<Variable>& inputs,
                                              const std::vector<Variable>& outputs);

  [[nodiscard]] const std::vector<Variable>& inputs() const noexcept { return inputs_; }
  [[nodiscard]] const std::vector<Variable>& outputs() const noexcept { return outputs_; }
  /// Apply nodes in a deterministic topological order (depth-first from outputs, inputs in order).
  /// Computed once after each change and cached; returned by value so a rule may replace nodes
  /// while it walks the order it got.
  [[nodiscard]] std::vector<ApplyNode*> toposort() const;
  /// Constants and shared variables the graph reads.
  [[nodiscard]] std::vector<Variable> leaves() const;

  /// Who reads `value` (empty for a value outside the graph).
  [[nodiscard]] const std::vector<Client>& clients(const Variable& value) const;
  [[nodiscard]] std::size_t client_count(const Variable& value) const {
    return clients(value).size();
  }
  /// Whether `value` is one of the graph's outputs.
  [[nodiscard]] bool is_output(const Variable& value) const;
  /// Whether `node` is part of the graph (a graph output depends on it).
  [[nodiscard]] bool contains(const ApplyNode& node) const { return nodes_.contains(&node); }
  /// Number of apply nodes.
  [[nodiscard]] std::size_t node_count() const noexcept { return nodes_.size(); }

  /// Makes every current client of `old_value` (and every output equal to it) read `replacement`.
  /// Nodes that `replacement` needs join the graph; nodes nothing reads any more leave it. Clients
  /// are taken before `replacement` joins, so replace(x, f(x)) inserts f after x. Types must match;
  /// throws TypeMismatch otherwise. A node that leaves stays alive until release_replaced(), so a
  /// rule may keep iterating over raw node pointers.
  void replace(const Variable& old_value, const Variable& replacement);
  /// Drops the nodes kept alive by replace(); call between passes, never while iterating.
  void release_replaced() noexcept { replaced_.clear(); }

  /// Registers a listener (not owned; remove it before it dies).
  void add_listener(GraphListener* listener) { listeners_.push_back(listener); }
  void remove_listener(GraphListener* listener);

  /// Rebuilds the index from the outputs and throws Internal naming the first difference (a value
  /// with a missing or extra client, a node that should or should not be in the graph): the check
  /// a rewrite's tests and debug builds run after each rule.
  void check_index() const;

 private:
  void add_to_index(ApplyNode& node);
  void import_node(ApplyNode& root);
  void remove_client(const Variable& value, const Client& client);
  void prune_if_unused(ApplyNode* node);
  [[nodiscard]] bool is_unused(const ApplyNode& node) const;

  std::vector<Variable> inputs_;
  std::vector<Variable> outputs_;
  std::unordered_map<const VariableNode*, std::vector<Client>> clients_;
  std::unordered_set<const ApplyNode*> nodes_;
  std::vector<GraphListener*> listeners_;
  std::vector<Client> no_clients_;  ///< what clients() returns for a value no node reads
  std::vector<std::shared_ptr<ApplyNode>> replaced_;
  mutable std::vector<ApplyNode*> order_;
  mutable bool order_valid_ = false;
};

}  // namespace tscope

#pragma GCC visibility pop
