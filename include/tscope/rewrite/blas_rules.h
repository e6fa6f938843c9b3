// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Rewrite rules that route matrix products to BLAS-shaped ops (Theano's gemm optimizer, reduced
/// to the exact cases): Dot of two 2-D inputs of one float dtype becomes Dot22, and a Dot22 whose
/// only client is an add of a term that broadcasts to the product becomes Gemm (beta = alpha = 1).
/// Replacements carry the replaced node's provenance.
#include <vector>

#include "tscope/rewrite/rule.h"

namespace tscope::rewrite {

/// dot_to_dot22 (tracks Dot) and gemm_from_dot22_add (tracks Add), in that order.
[[nodiscard]] std::vector<LocalRule> blas_rules();

}  // namespace tscope::rewrite
