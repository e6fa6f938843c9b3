// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Small matching helpers for local rules (rule.h): "is this value produced by op X", "is it read
/// once", "is it a scalar constant". They read the FunctionGraph's clients index, so each is O(1).
#include "tscope/graph/function_graph.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

/// The node producing `value` when its op is `op`; null otherwise (also for graph inputs,
/// constants and shared variables).
[[nodiscard]] inline ApplyNode* producer_of(const Variable& value, const OpDef& op) {
  ApplyNode* owner = value.owner();
  return owner != nullptr && &owner->op() == &op ? owner : nullptr;
}

/// Whether `value` has exactly one reader, a node (not a graph output): a rule may then fold its
/// producer into that reader without computing it twice.
[[nodiscard]] inline bool read_once(const FunctionGraph& graph, const Variable& value) {
  const std::vector<Client>& clients = graph.clients(value);
  return clients.size() == 1 && !clients.front().is_output();
}

/// Whether `value` is a constant holding one element.
[[nodiscard]] inline bool is_scalar_constant(const Variable& value) {
  return value.kind() == VariableKind::Constant && value.constant_value().numel() == 1;
}

}  // namespace tscope::rewrite

#pragma GCC visibility pop
