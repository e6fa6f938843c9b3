// SPDX-License-Identifier: Apache-2.0
#include "tscope/graph/function_graph.h"

#include "tscope/graph/traversal.h"

#include <functional>
#include <unordered_set>

#include <fmt/format.h>

namespace tscope {

FunctionGraph FunctionGraph::clone_of(const std::vector<Variable>& inputs,
                                      const std::vector<Variable>& outputs) {
  FunctionGraph graph;
  std::unordered_map<const VariableNode*, Variable> mapping;
  for (const Variable& input : inputs) {
    if (input.kind() != VariableKind::Input) {
      throw_error(ErrorKind::InvalidArgument,
                  "function input '{}' is not an input variable (constants and shared variables "
                  "cannot be function inputs)",
                  input.to_string());
    }
    if (mapping.count(input.node()) != 0) {
      throw_error(ErrorKind::InvalidArgument, "input '{}' is listed twice", input.to_string());
    }
    auto copy = std::make_shared<VariableNode>(*input.node());
    copy->id = detail::next_graph_id();
    Variable cloned(std::move(copy));
    mapping.emplace(input.node(), cloned);
    graph.inputs_.push_back(cloned);
  }
  auto map_variable = [&](const Variable& v, const ApplyNode* client) -> Variable {
    auto it = mapping.find(v.node());
    if (it != mapping.end()) return it->second;
    if (v.kind() == VariableKind::Constant || v.kind() == VariableKind::Shared) return v;
    TSCOPE_CHECK(v.kind() == VariableKind::Input, "output visited before its producer");
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("the graph needs input '{}' (created at {}), which is not among the "
                            "function's inputs",
                            v.to_string(), v.node()->provenance.site.short_string()))
        .add_context(client != nullptr ? "needed by " + client->describe() : "it is an output");
  };
  for (ApplyNode* node : ancestors_in_topological_order(outputs)) {
    std::vector<Variable> new_inputs;
    new_inputs.reserve(node->inputs().size());
    for (const Variable& input : node->inputs()) new_inputs.push_back(map_variable(input, node));
    auto copy = ApplyNode::create(node->op(), std::move(new_inputs), node->attrs(),
                                  node->provenance());
    for (int i = 0; i < node->num_outputs(); ++i) {
      Variable out = copy->output(i);
      out.node()->name = node->output_node(i).name;
      mapping.emplace(&node->output_node(i), out);
    }
  }
  for (const Variable& output : outputs) graph.outputs_.push_back(map_variable(output, nullptr));
  return graph;
}

std::vector<ApplyNode*> FunctionGraph::toposort() const {
  return ancestors_in_topological_order(outputs_);
}

std::vector<Variable> FunctionGraph::leaves() const {
  std::vector<Variable> result;
  std::unordered_set<const VariableNode*> seen;
  auto consider = [&](const Variable& v) {
    if ((v.kind() == VariableKind::Constant || v.kind() == VariableKind::Shared) &&
        seen.insert(v.node()).second) {
      result.push_back(v);
    }
  };
  for (ApplyNode* node : toposort()) {
    for (const Variable& input : node->inputs()) consider(input);
  }
  for (const Variable& output : outputs_) consider(output);
  return result;
}

void FunctionGraph::replace(const Variable& old_value, const Variable& replacement) {
  if (old_value.type().dtype != replacement.type().dtype ||
      old_value.rank() != replacement.rank()) {
    throw_error(ErrorKind::TypeMismatch, "cannot replace {} ({}) by {} ({})",
                old_value.to_string(), old_value.type().to_string(), replacement.to_string(),
                replacement.type().to_string());
  }
  if (old_value.owner() != nullptr) replaced_.push_back(old_value.owner()->shared_from_this());
  for (ApplyNode* node : toposort()) {
    for (int i = 0; i < node->num_inputs(); ++i) {
      if (node->input(i) == old_value) node->set_input(i, replacement);
    }
  }
  for (Variable& output : outputs_) {
    if (output == old_value) output = replacement;
  }
}

}  // namespace tscope
