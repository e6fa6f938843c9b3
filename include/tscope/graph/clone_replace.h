// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Graphs with some Variables replaced by others (Theano's clone_replace, behind `givens`):
///
///   Variable y = exp(x) + z;
///   auto [y2] = clone_replace({y}, {{x, ones_like(x)}});   // exp(ones_like(x)) + z
///
/// Every node between a replaced Variable and the outputs is rebuilt with the same op, attributes
/// and provenance (so profiles and errors still name the user's line); nodes that depend on no
/// replaced Variable are shared with the original graph, which is unchanged.
#include <utility>
#include <vector>

#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

/// `outputs` with each replacement's first Variable replaced by its second. Throws TypeMismatch
/// when a replacement's dtype or rank differs from the Variable it replaces, InvalidArgument
/// naming a replaced Variable that no output depends on.
[[nodiscard]] std::vector<Variable> clone_replace(
    const std::vector<Variable>& outputs,
    const std::vector<std::pair<Variable, Variable>>& replacements);

}  // namespace tscope

#pragma GCC visibility pop
