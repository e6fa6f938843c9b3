// SPDX-License-Identifier: Apache-2.0
#pragma once
/// use_inplace: lets an elementwise node write its result into the buffer of an input that
/// nothing else will read, as Theano's inplace optimizers do with a destroy map. The node gets
/// the attribute "inplace" = k (Theano's `[(0, k)]`: output 0 overwrites input k); its printed
/// name shows it and the memory profile marks the output `i`.
///
/// Input k may be overwritten only when every reader of it could otherwise see the change, which
/// the rule proves from the graph:
///  - the node is a plain elementwise op with block kernels, or a single-output Composite without
///    a reduction (each reads input k at the index it writes, before writing it);
///  - input k has the output's dtype and, statically, its shape (no axis of static size 1 that
///    the output broadcasts);
///  - input k is computed by the graph (not a graph input, constant or shared value), is not a
///    graph output or update, and this node is its only reader (so no later node, and no view of
///    it, reads it);
///  - its producer does not declare it a view (writing would change the viewed tensor).
/// The VM checks the rest when the node runs (KernelContext::allocate_output): the actual shape
/// and contiguity, and that the buffer has no holder beyond the chain of in-place writes that
/// produced it (a kernel may return an input's buffer without declaring a view). When a check
/// fails the node allocates as usual.
///
/// Runs last: earlier rewrites replace nodes and would have to keep the attribute valid.
#include <cstdint>

#include "tscope/graph/function_graph.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

/// Marks every node of `graph` that may overwrite an input; returns how many were marked.
std::int64_t use_inplace(FunctionGraph& graph);

/// The input whose buffer `node`'s output 0 may take (its "inplace" mark), or -1.
[[nodiscard]] int overwritten_input(const ApplyNode& node);

}  // namespace tscope::rewrite

#pragma GCC visibility pop
