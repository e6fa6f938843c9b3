// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Graph walks shared by grad(), FunctionGraph and printers.
#include <vector>

#include "tscope/graph/apply.h"

namespace tscope {

/// Every Apply that `outputs` depend on, in a deterministic topological order (iterative
/// depth-first post-order, inputs visited in order), so deep chains never overflow the stack.
[[nodiscard]] std::vector<ApplyNode*> ancestors_in_topological_order(const std::vector<Variable>& outputs);

}  // namespace tscope
