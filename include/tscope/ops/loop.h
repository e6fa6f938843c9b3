// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The Scan op: a loop whose body is a graph. Its record sits in the registry like every op's,
/// but its type rule, kernel and gradient depend on the body, which the node carries as its
/// "body" attribute (a LoopBody). The runtime layer builds bodies (tscope/runtime/scan.h): running
/// a body means linking and running a Program, which lives above the ops. It has no cost rule:
/// its cost is its body's nodes', which the loop's own profile section shows.
#include <string>
#include <vector>

#include "tscope/graph/op_def.h"
#include "tscope/graph/subgraph.h"

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
};

/// The body of a Scan node's attributes.
[[nodiscard]] const LoopBody& loop_body(const Attrs& attrs);

}  // namespace tscope
