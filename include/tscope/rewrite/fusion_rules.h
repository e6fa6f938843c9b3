// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Elementwise fusion (Theano's Elemwise fusion): every maximal group of elementwise nodes that
/// can run as one loop becomes one Composite node, so the group's intermediate values are never
/// stored. A node joins a group when its op has block kernels (OpDef::block), its inputs and
/// output share one float dtype (or it is a comparison of that dtype, or a Cast of one to it),
/// and every reader of its value is in the group (a value read elsewhere, or a graph output, ends
/// the group there: it is never computed twice). A Sum or Max over such a group becomes a
/// Composite with that reduction, so a reduced intermediate is never stored either; sibling Sums
/// or Maxes over the same axes of one value become one Composite with an output each. Inputs that broadcast are read through strides; views (DimShuffle) stay outside
/// as inputs. A lone elementwise node is left as it is. Each Composite carries the provenance of
/// the node whose value it computes.
#include <cstdint>

#include "tscope/graph/function_graph.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

/// Applies the fusion over `graph`; returns the number of Composite nodes made.
std::int64_t fuse_elementwise(FunctionGraph& graph);

}  // namespace tscope::rewrite

#pragma GCC visibility pop
