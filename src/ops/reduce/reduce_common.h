// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every axis reduction shares: the "axes"/"keepdims" attributes, the type rule, the walk
// that maps each input element to its output element, and the printed name CAReduce{op}{axes}.
#include <cstdint>
#include <functional>
#include <vector>

#include "tscope/graph/apply.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// Normalised, sorted, de-duplicated axes; an empty "axes" attribute means every axis.
std::vector<int> reduced_axes(const Attrs& attrs, int rank);
/// Attrs for a reduction of `x` over `axes` (validated against x's rank; throws IndexOutOfRange).
Attrs reduce_attrs(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims);
/// Output dims of reducing `dims` over `axes`.
Dims reduced_dims(const Dims& dims, const std::vector<int>& axes, bool keepdims);
/// Type rule: same dtype unless `accumulate_dtype` maps it (sum of ints -> int64).
std::vector<Type> infer_reduce(const InferContext& ctx, DType (*output_dtype)(DType));
/// For every input element (row-major), the flat index of its output element.
void for_each_reduced(const Dims& input_shape, const std::vector<int>& axes,
                      const std::function<void(std::int64_t in_flat, std::int64_t out_flat)>& fn);
/// "CAReduce{add}{0,1}"-style name; `scalar` is the Theano scalar op name.
std::string print_reduce(std::string_view scalar, const Attrs& attrs, int rank_hint = -1);
/// The pullback's first step: g with the reduced axes put back as size-1 axes.
Variable expand_reduced_grad(const Variable& grad, const Variable& input, const Attrs& attrs);
Cost reduce_cost(const CostContext& ctx);

}  // namespace tscope::ops::detail
