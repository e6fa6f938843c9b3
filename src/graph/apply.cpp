// SPDX-License-Identifier: Apache-2.0
#include "tscope/graph/apply.h"

#include <fmt/format.h>

namespace tscope {

Variable ApplyNode::output(int index) const {
  // Aliasing constructor: the handle points at the output but shares ownership of this node.
  return Variable(std::shared_ptr<VariableNode>(
      std::const_pointer_cast<ApplyNode>(shared_from_this()), outputs_[index].get()));
}

std::vector<Variable> ApplyNode::outputs() const {
  std::vector<Variable> result;
  result.reserve(outputs_.size());
  for (int i = 0; i < num_outputs(); ++i) result.push_back(output(i));
  return result;
}

ApplyNode::~ApplyNode() {
  std::vector<Variable> pending = std::move(inputs_);
  while (!pending.empty()) {
    Variable value = std::move(pending.back());
    pending.pop_back();
    ApplyNode* producer = value.owner();
    // If this handle is the producer's last owner, take the producer's inputs now so its own
    // destructor finds nothing left to release recursively.
    if (producer != nullptr && value.node_ptr().use_count() == 1) {
      for (Variable& input : producer->inputs_) pending.push_back(std::move(input));
      producer->inputs_.clear();
    }
  }
}

std::string ApplyNode::to_string() const {
  std::string text = op_string() + "(";
  for (int i = 0; i < num_inputs(); ++i) {
    if (i > 0) text += ", ";
    text += inputs_[i].to_string();
  }
  return text + ")";
}

std::string ApplyNode::describe() const {
  return fmt::format("node {} created at {} (user op '{}')", to_string(),
                     provenance_.site.short_string(), provenance_.user_op);
}

std::shared_ptr<ApplyNode> ApplyNode::create(const OpDef& op, std::vector<Variable> inputs,
                                             Attrs attrs, Provenance provenance) {
  auto node = std::shared_ptr<ApplyNode>(new ApplyNode());
  node->op_ = &op;
  node->attrs_ = std::move(attrs);
  node->inputs_ = std::move(inputs);
  node->provenance_ = std::move(provenance);
  node->id_ = detail::next_graph_id();
  for (int i = 0; i < node->num_inputs(); ++i) {
    if (!node->inputs_[i].defined()) {
      throw Error(ErrorKind::InvalidArgument, fmt::format("input {} of {} is undefined", i, op.name))
          .add_context(node->describe());
    }
  }
  if (op.num_inputs >= 0 && node->num_inputs() != op.num_inputs) {
    throw Error(ErrorKind::InvalidArgument, fmt::format("{} takes {} inputs, {} given", op.name,
                                                        op.num_inputs, node->num_inputs()))
        .add_context(node->describe());
  }
  std::vector<Type> output_types;
  try {
    output_types = op.infer(InferContext{op, node->inputs_, node->attrs_});
    // Type rules add and multiply input extents; an inferred shape too large to address is the
    // user's (a huge Tile or Expand), and is reported here rather than at the first allocation.
    for (std::size_t i = 0; i < output_types.size(); ++i) {
      check_type_extents(output_types[i], fmt::format("{} output {}", op.name, i));
    }
  } catch (Error& error) {
    error.add_context("in " + node->describe());
    throw;
  }
  // num_outputs < 0: variadic outputs, the type rule decides how many (Split).
  TSCOPE_CHECK(op.num_outputs < 0 || static_cast<int>(output_types.size()) == op.num_outputs,
               fmt::format("{} inferred {} outputs, declares {}", op.name, output_types.size(),
                           op.num_outputs));
  for (int i = 0; i < static_cast<int>(output_types.size()); ++i) {
    auto output = std::make_unique<VariableNode>();
    output->id = detail::next_graph_id();
    output->type = output_types[i];
    output->kind = VariableKind::Output;
    output->owner = node.get();
    output->output_index = i;
    node->outputs_.push_back(std::move(output));
  }
  return node;
}

std::vector<Variable> apply_op(const OpDef& op, std::vector<Variable> inputs, Attrs attrs,
                               const std::source_location& location) {
  auto node = ApplyNode::create(op, std::move(inputs), std::move(attrs),
                                current_provenance(op.name, location));
  return node->outputs();
}

Variable apply_op1(const OpDef& op, std::vector<Variable> inputs, Attrs attrs,
                   const std::source_location& location) {
  auto node = ApplyNode::create(op, std::move(inputs), std::move(attrs),
                                current_provenance(op.name, location));
  return node->output(0);
}

}  // namespace tscope
