// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Constant folding for the ops that ask for it (OpTraits::fold_when_constant: layout changes such
/// as weight packing). A node whose inputs are all constants is run once, here, with the kernel the
/// VM would pick, and its output becomes a constant; the node leaves the graph and the profile.
#include <cstdint>

#include "tscope/graph/function_graph.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

/// Folds every foldable node whose inputs are constants; returns the number folded.
std::int64_t fold_constant_layouts(FunctionGraph& graph);

}  // namespace tscope::rewrite

#pragma GCC visibility pop
