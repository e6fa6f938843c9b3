// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The Scan op: a loop whose body is a graph. Its record sits in the registry like every op's,
/// but its type rule, kernel and gradient depend on the body, which the node carries as its
/// "body" attribute (a LoopBody). The runtime layer builds bodies (tscope/runtime/scan.h): running
/// a body means linking and running a Program, which lives above the ops. It has no cost rule:
/// its cost is its body's nodes', which the loop's own profile section shows.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tscope/graph/op_def.h"
#include "tscope/graph/subgraph.h"

#pragma GCC visibility push(default)

namespace tscope {

class LoopBody : public Subgraph {
 public:
  /// The outer outputs' types for these outer inputs (checked against the body).
  [[nodiscard]] virtual std::vector<Type> output_types(const InferContext& context) const = 0;
  /// Runs the loop for one execution of the node.
  virtual void run(KernelContext& context) const = 0;
  /// Gradients of the outer inputs (a loop running backwards).
  [[nodiscard]] virtual std::vector<Variable> pullback(const PullbackContext& context) const = 0;
  /// The printed op: "Scan{name}".
  [[nodiscard]] virtual std::string printed_name() const = 0;

  /// The rewrites of a loop (rewrite/loop_rules.h) ask the body for a changed copy; the body
  /// itself never changes.
  /// A changed loop: its body and its outer inputs.
  struct Hoisted {
    std::shared_ptr<const LoopBody> body;
    std::vector<Variable> outer_inputs;
  };
  /// The same loop with the body's values that depend on no sequence or state (only on
  /// non-sequences and constants) computed once, before the loop: the new body and its outer
  /// inputs (`outer_inputs`, then one per hoisted value). nullopt when there is none.
  [[nodiscard]] virtual std::optional<Hoisted> hoist_invariants(
      const std::vector<Variable>& outer_inputs) const = 0;
  /// The same loop with the body's values that depend on one sequence row and on loop-invariant
  /// values only (x[t] . W, an elementwise chain of x[t]) computed for every row at once, before
  /// the loop (one product over all rows instead of one per step), and read as new sequences
  /// (after the others, tap 0). nullopt when there is none, or for a while loop.
  [[nodiscard]] virtual std::optional<Hoisted> push_out_sequence_work(
      const std::vector<Variable>& outer_inputs) const = 0;
  /// One loop doing the work of this one and `other` in lockstep, when both run over the same
  /// sequences (`outer_inputs` and `other_outer_inputs` hold the same step count and sequence
  /// Variables, with the same taps and direction) and neither is a while loop: the new body
  /// (named "<this>&<other>") and its outer inputs. Its outputs are this loop's, then other's.
  [[nodiscard]] virtual std::optional<Hoisted> merged_with(
      const LoopBody& other,
      const std::vector<Variable>& outer_inputs,
      const std::vector<Variable>& other_outer_inputs) const = 0;
  /// Whether output `output` is stacked and could come out as its final value alone (a
  /// fed-back output, which the loop keeps anyway).
  /// A loop whose outputs changed: its body, its outer inputs, and how the old loop's outputs
  /// are computed from the new loop's.
  struct Reshaped {
    std::shared_ptr<const LoopBody> body;
    std::vector<Variable> outer_inputs;
    std::function<std::vector<Variable>(const std::vector<Variable>& new_outputs)> old_outputs;
  };
  /// The same loop without its sums of matrix products: a fed-back output whose final value alone
  /// comes out and whose step is s + a . b (a weight gradient summed over the steps) becomes two
  /// stacked outputs, every step's a and b, and one product over all steps' rows after the
  /// loop. nullopt when there is none.
  [[nodiscard]] virtual std::optional<Reshaped> push_out_accumulated_products(
      const std::vector<Variable>& outer_inputs) const = 0;
  [[nodiscard]] virtual bool can_keep_last_only(int output) const = 0;
  /// The same loop with output `output` giving its final value alone (the output's type loses
  /// axis 0).
  [[nodiscard]] virtual std::shared_ptr<const LoopBody> with_last_only(int output) const = 0;
};

/// The body of a Scan node's attributes.
[[nodiscard]] const LoopBody& loop_body(const Attrs& attrs);

}  // namespace tscope

#pragma GCC visibility pop
