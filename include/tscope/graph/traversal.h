// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Graph walks shared by grad(), FunctionGraph and printers.
#include <span>
#include <vector>

#include "tscope/graph/apply.h"

#pragma GCC visibility push(default)

namespace tscope {

/// Every Apply that `outputs` depend on, in a deterministic topological order (iterative
/// depth-first post-order, inputs visited in order), so deep chains never overflow the stack.
[[nodiscard]] std::vector<ApplyNode*> ancestors_in_topological_order(
    const std::vector<Variable>& outputs);

/// Whether `value` is a constant or a view of constants (Subtensor, DimShuffle, Reshape of a
/// constant, with every input of each view a constant too): its data never changes while the
/// function lives, so a kernel may keep what it derives from it (packed weights) across calls.
[[nodiscard]] bool views_constant_data(const Variable& value);

/// Whether `value` is a constant, one of `sources`, or a view (as in views_constant_data) whose
/// every input is one of those in turn.
[[nodiscard]] bool views_only(const Variable& value, std::span<const Variable> sources);

}  // namespace tscope

#pragma GCC visibility pop
