// SPDX-License-Identifier: Apache-2.0
#pragma once
/// ApplyNode: an op applied to input Variables, owning its output Variables.
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "tscope/graph/attrs.h"
#include "tscope/graph/op_def.h"
#include "tscope/graph/provenance.h"
#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

class FunctionGraph;

class ApplyNode : public std::enable_shared_from_this<ApplyNode> {
 public:
  [[nodiscard]] const OpDef& op() const noexcept { return *op_; }
  [[nodiscard]] const Attrs& attrs() const noexcept { return attrs_; }
  [[nodiscard]] const std::vector<Variable>& inputs() const noexcept { return inputs_; }
  [[nodiscard]] const Variable& input(int index) const { return inputs_[index]; }
  [[nodiscard]] int num_inputs() const noexcept { return static_cast<int>(inputs_.size()); }
  [[nodiscard]] int num_outputs() const noexcept { return static_cast<int>(outputs_.size()); }
  /// A handle to output `index`; keeps this node alive.
  [[nodiscard]] Variable output(int index) const;
  [[nodiscard]] std::vector<Variable> outputs() const;
  [[nodiscard]] const VariableNode& output_node(int index) const { return *outputs_[index]; }
  [[nodiscard]] const Provenance& provenance() const noexcept { return provenance_; }
  [[nodiscard]] std::int64_t id() const noexcept { return id_; }

  /// Printed op: "Elemwise{add,no_inplace}".
  [[nodiscard]] std::string op_string() const { return op_->printed_name(attrs_); }
  /// Printed node: "Elemwise{add,no_inplace}(x, W)".
  [[nodiscard]] std::string to_string() const;
  /// "node Elemwise{add,no_inplace}(x, W) created at mlp.cpp:42 (user op 'add')" for errors.
  [[nodiscard]] std::string describe() const;

  /// Releases the inputs iteratively, so dropping the last handle to a very deep graph (a chain
  /// of many thousands of nodes) cannot overflow the stack through nested destructors.
  ~ApplyNode();
  ApplyNode(const ApplyNode&) = delete;
  ApplyNode& operator=(const ApplyNode&) = delete;

  /// Builds a node: checks arity, runs the op's type rule, creates outputs. Errors from the type
  /// rule get the node's description (op, inputs, creation site) as context.
  [[nodiscard]] static std::shared_ptr<ApplyNode> create(const OpDef& op, std::vector<Variable> inputs,
                                                         Attrs attrs, Provenance provenance);

 private:
  friend class FunctionGraph;
  ApplyNode() = default;
  void set_input(int index, Variable value) { inputs_[index] = std::move(value); }

  const OpDef* op_ = nullptr;
  Attrs attrs_;
  std::vector<Variable> inputs_;
  std::vector<std::unique_ptr<VariableNode>> outputs_;
  Provenance provenance_;
  std::int64_t id_ = 0;
};

/// Applies `op` and returns its outputs; provenance comes from the active ProvenanceScope or from
/// `location` (the user's call site) and the op's name.
[[nodiscard]] std::vector<Variable> apply_op(const OpDef& op, std::vector<Variable> inputs,
                                             Attrs attrs, const std::source_location& location);
/// Same, for single-output ops.
[[nodiscard]] Variable apply_op1(const OpDef& op, std::vector<Variable> inputs, Attrs attrs,
                                 const std::source_location& location);

}  // namespace tscope

#pragma GCC visibility pop
