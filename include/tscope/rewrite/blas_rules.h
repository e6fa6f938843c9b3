// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Rewrite rules that route matrix products to BLAS-shaped ops (Theano's gemm optimizer, reduced
/// to the exact cases): Dot of two 2-D inputs of one float dtype becomes Dot22, and a Dot22 whose
/// only client is an add of a term that broadcasts to the product becomes Gemm (beta = alpha = 1).
/// Replacements carry the replaced node's provenance.
#include <cstdint>

#include "tscope/graph/function_graph.h"

namespace tscope::rewrite {

/// Applies both rules over `graph`; returns the number of nodes replaced.
std::int64_t use_blas_products(FunctionGraph& graph);

}  // namespace tscope::rewrite
