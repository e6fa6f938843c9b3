// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Rewrite rules that route matrix products to BLAS-shaped ops (Theano's gemm optimizer, reduced
/// to a product and one term): Dot of two 2-D inputs of one float dtype becomes Dot22, and a Dot22
/// whose only client is an add or subtract of a term that broadcasts to the product, either side
/// possibly a product with a scalar constant read once, becomes Gemm with those factors and the
/// sign as alpha and beta (SGD's momentum * v - rate * g with g a weight gradient).
/// So does one whose only client is a reshape that splits its rows ((m, n) to (..., n)), read
/// only by an add of a row of n (a Linear layer's bias on 3-D activations): the add becomes a
/// reshape of the Gemm, which with constant weights runs on oneDNN's packed matmul. An erf GELU,
/// x * 0.5 * (1 + erf(x / sqrt(2))) (the three factors in any grouping, the scaling a division
/// by sqrt(2) or a product with its reciprocal), applied to a Gemm or to a reshape of one becomes
/// the Gemm's "gelu_erf" activation, when x and every intermediate are read by the GELU alone.
/// Replacements carry the replaced node's provenance (a fused Gemm keeps the Gemm's).
#include <vector>

#include "tscope/rewrite/rule.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

/// dot_to_dot22 (tracks Dot), gemm_from_scaled_sum (tracks Add and Sub), gemm_through_row_split
/// (tracks Add), transpose_through_dot22 (tracks DimShuffle) and fuse_gemm_gelu (tracks Mul), in
/// that order.
[[nodiscard]] std::vector<LocalRule> blas_rules();

}  // namespace tscope::rewrite

#pragma GCC visibility pop
