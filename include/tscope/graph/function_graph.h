// SPDX-License-Identifier: Apache-2.0
#pragma once
/// FunctionGraph: the graph between a function's inputs and outputs, owned by a compiled function
/// (a clone of the user's graph, so rewrites never touch user Variables). Rewrites mutate it
/// through replace().
#include <unordered_map>
#include <vector>

#include "tscope/graph/apply.h"
#include "tscope/graph/variable.h"

namespace tscope {

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
  [[nodiscard]] std::vector<ApplyNode*> toposort() const;
  /// Constants and shared variables the graph reads.
  [[nodiscard]] std::vector<Variable> leaves() const;
  /// Makes every client of `old_value` (and every output equal to it) use `replacement`. Types
  /// must match; throws TypeMismatch otherwise. The replaced node stays alive until
  /// release_replaced(), so a rule may keep iterating over raw node pointers.
  void replace(const Variable& old_value, const Variable& replacement);
  /// Drops the nodes kept alive by replace(); call between passes, never while iterating.
  void release_replaced() noexcept { replaced_.clear(); }
  /// Number of apply nodes.
  [[nodiscard]] std::size_t node_count() const { return toposort().size(); }

 private:
  std::vector<Variable> inputs_;
  std::vector<Variable> outputs_;
  std::vector<std::shared_ptr<ApplyNode>> replaced_;
};

}  // namespace tscope
