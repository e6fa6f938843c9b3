// SPDX-License-Identifier: Apache-2.0
#include "tscope/graph/function_graph.h"

#include "tscope/graph/traversal.h"

#include <algorithm>
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
  // The clones are made in the original's topological order, which is also the clone's own (the
  // order depends only on the structure), so the index and the cached order are built here.
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
    graph.add_to_index(*copy);
    graph.order_.push_back(copy.get());
  }
  for (const Variable& output : outputs) graph.outputs_.push_back(map_variable(output, nullptr));
  for (int i = 0; i < static_cast<int>(graph.outputs_.size()); ++i) {
    graph.clients_[graph.outputs_[static_cast<std::size_t>(i)].node()].push_back({nullptr, i});
  }
  graph.order_valid_ = true;
  return graph;
}

std::vector<ApplyNode*> FunctionGraph::toposort() const {
  if (!order_valid_) {
    order_ = ancestors_in_topological_order(outputs_);
    order_valid_ = true;
  }
  return order_;
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

const std::vector<Client>& FunctionGraph::clients(const Variable& value) const {
  const auto it = clients_.find(value.node());
  return it != clients_.end() ? it->second : no_clients_;
}

bool FunctionGraph::is_output(const Variable& value) const {
  return std::ranges::any_of(clients(value), &Client::is_output);
}

void FunctionGraph::add_to_index(ApplyNode& node) {
  nodes_.insert(&node);
  for (int i = 0; i < node.num_inputs(); ++i) clients_[node.input(i).node()].push_back({&node, i});
}

// Adds `root` and every node it needs that is not yet in the graph, producers first, so that
// listeners see a node only after the nodes it reads.
void FunctionGraph::import_node(ApplyNode& root) {
  if (contains(root)) return;
  std::vector<std::pair<ApplyNode*, int>> stack{{&root, 0}};
  std::unordered_set<const ApplyNode*> on_stack{&root};
  while (!stack.empty()) {
    auto& [node, next_input] = stack.back();
    if (next_input < node->num_inputs()) {
      ApplyNode* producer = node->input(next_input++).owner();
      if (producer != nullptr && !contains(*producer) && on_stack.insert(producer).second) {
        stack.emplace_back(producer, 0);
      }
      continue;
    }
    ApplyNode* done = node;
    stack.pop_back();
    add_to_index(*done);
    for (GraphListener* listener : listeners_) listener->on_import(*done);
  }
}

void FunctionGraph::remove_client(const Variable& value, const Client& client) {
  const auto it = clients_.find(value.node());
  TSCOPE_CHECK(it != clients_.end(), "clients index has no entry for " + value.to_string());
  std::vector<Client>& list = it->second;
  const auto found = std::ranges::find(list, client);
  TSCOPE_CHECK(found != list.end(), "clients index misses a reader of " + value.to_string());
  list.erase(found);
  if (list.empty()) clients_.erase(it);
}

bool FunctionGraph::is_unused(const ApplyNode& node) const {
  for (int i = 0; i < node.num_outputs(); ++i) {
    if (clients_.contains(&node.output_node(i))) return false;
  }
  return true;
}

// Removes `node` when nothing reads it, then its producers that this leaves unread. Each removed
// node is kept alive until release_replaced() so raw pointers held by a rule stay valid.
void FunctionGraph::prune_if_unused(ApplyNode* node) {
  std::vector<ApplyNode*> pending{node};
  while (!pending.empty()) {
    ApplyNode* candidate = pending.back();
    pending.pop_back();
    if (candidate == nullptr || !contains(*candidate) || !is_unused(*candidate)) continue;
    replaced_.push_back(candidate->shared_from_this());
    nodes_.erase(candidate);
    for (int i = 0; i < candidate->num_inputs(); ++i) {
      const Variable& input = candidate->input(i);
      remove_client(input, {candidate, i});
      pending.push_back(input.owner());
    }
    for (GraphListener* listener : listeners_) listener->on_prune(*candidate);
  }
}

void FunctionGraph::replace(const Variable& old_value, const Variable& replacement) {
  if (old_value.type().dtype != replacement.type().dtype ||
      old_value.rank() != replacement.rank()) {
    throw_error(ErrorKind::TypeMismatch, "cannot replace {} ({}) by {} ({})",
                old_value.to_string(), old_value.type().to_string(), replacement.to_string(),
                replacement.type().to_string());
  }
  if (old_value == replacement) return;
  const auto it = clients_.find(old_value.node());
  if (it == clients_.end()) return;
  // Taken before the replacement joins: a replacement that reads old_value keeps reading it.
  const std::vector<Client> readers = std::move(it->second);
  clients_.erase(it);
  if (ApplyNode* producer = replacement.owner(); producer != nullptr) import_node(*producer);
  std::vector<Client>& new_readers = clients_[replacement.node()];
  for (const Client& reader : readers) {
    new_readers.push_back(reader);
    if (reader.is_output()) {
      outputs_[static_cast<std::size_t>(reader.index)] = replacement;
      continue;
    }
    TSCOPE_CHECK(reader.node != replacement.owner(),
                 "replacing " + old_value.to_string() + " would make " + reader.node->describe() +
                     " read its own output");
    reader.node->set_input(reader.index, replacement);
    for (GraphListener* listener : listeners_) {
      listener->on_change_input(*reader.node, reader.index, old_value, replacement);
    }
  }
  order_valid_ = false;
  // The old value's producer may still be alive through the readers' old handles until here;
  // keep it (and what only it read) until release_replaced().
  if (ApplyNode* producer = old_value.owner(); producer != nullptr) {
    replaced_.push_back(producer->shared_from_this());
    prune_if_unused(producer);
  }
}

void FunctionGraph::remove_listener(GraphListener* listener) {
  std::erase(listeners_, listener);
}

void FunctionGraph::check_index() const {
  std::unordered_map<const VariableNode*, std::vector<Client>> expected_clients;
  std::unordered_set<const ApplyNode*> expected_nodes;
  for (ApplyNode* node : ancestors_in_topological_order(outputs_)) {
    expected_nodes.insert(node);
    for (int i = 0; i < node->num_inputs(); ++i) {
      expected_clients[node->input(i).node()].push_back({node, i});
    }
  }
  for (int i = 0; i < static_cast<int>(outputs_.size()); ++i) {
    expected_clients[outputs_[static_cast<std::size_t>(i)].node()].push_back({nullptr, i});
  }
  for (const ApplyNode* node : expected_nodes) {
    TSCOPE_CHECK(nodes_.contains(node),
                 "graph index: " + node->describe() + " is reachable but not indexed");
  }
  for (const ApplyNode* node : nodes_) {
    TSCOPE_CHECK(expected_nodes.contains(node),
                 "graph index: " + node->describe() + " is indexed but unreachable");
  }
  auto sorted = [](std::vector<Client> list) {
    std::ranges::sort(list, [](const Client& a, const Client& b) {
      return std::pair(a.node, a.index) < std::pair(b.node, b.index);
    });
    return list;
  };
  TSCOPE_CHECK(expected_clients.size() == clients_.size(),
               fmt::format("graph index: {} values have readers, the index lists {}",
                           expected_clients.size(), clients_.size()));
  for (const auto& [value, readers] : expected_clients) {
    const auto it = clients_.find(value);
    TSCOPE_CHECK(it != clients_.end() && sorted(it->second) == sorted(readers),
                 fmt::format("graph index: the readers of value {} differ from the graph's",
                             value->id));
  }
}

}  // namespace tscope
