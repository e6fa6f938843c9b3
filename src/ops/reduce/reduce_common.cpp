// SPDX-License-Identifier: Apache-2.0
#include "reduce_common.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tscope/ops/shape.h"

namespace tscope::ops::detail {

std::vector<int> reduced_axes(const Attrs& attrs, int rank) {
  std::vector<int> axes;
  const auto& given = attrs.get_ints("axes");
  if (given.empty()) {
    for (int axis = 0; axis < rank; ++axis) axes.push_back(axis);
    return axes;
  }
  for (std::int64_t axis : given) axes.push_back(normalize_axis(axis, rank));
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

Attrs reduce_attrs(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims) {
  std::vector<std::int64_t> normalized;
  for (std::int64_t axis : axes) normalized.push_back(normalize_axis(axis, x.rank()));
  std::sort(normalized.begin(), normalized.end());
  normalized.erase(std::unique(normalized.begin(), normalized.end()), normalized.end());
  if (axes.empty()) {
    for (int axis = 0; axis < x.rank(); ++axis) normalized.push_back(axis);
  }
  return Attrs{{"axes", normalized}, {"keepdims", keepdims}};
}

Dims reduced_dims(const Dims& dims, const std::vector<int>& axes, bool keepdims) {
  Dims result;
  for (int axis = 0; axis < dims.rank(); ++axis) {
    const bool reduced = std::find(axes.begin(), axes.end(), axis) != axes.end();
    if (!reduced) {
      result.push_back(dims[axis]);
    } else if (keepdims) {
      result.push_back(1);
    }
  }
  return result;
}

std::vector<Type> infer_reduce(const InferContext& ctx, DType (*output_dtype)(DType)) {
  const Type& input = ctx.input_type(0);
  const std::vector<int> axes = reduced_axes(ctx.attrs, input.rank());
  const bool keepdims = ctx.attrs.get_bool_or("keepdims", false);
  const DType dtype = output_dtype != nullptr ? output_dtype(input.dtype) : input.dtype;
  return {Type{dtype, reduced_dims(input.dims, axes, keepdims)}};
}

void for_each_reduced(const Dims& input_shape, const std::vector<int>& axes,
                      const std::function<void(std::int64_t, std::int64_t)>& fn) {
  const int rank = input_shape.rank();
  std::vector<bool> is_reduced(static_cast<std::size_t>(rank), false);
  for (int axis : axes) is_reduced[static_cast<std::size_t>(axis)] = true;
  // Output strides over the kept axes (row-major).
  std::vector<std::int64_t> out_stride(static_cast<std::size_t>(rank), 0);
  std::int64_t stride = 1;
  for (int axis = rank - 1; axis >= 0; --axis) {
    if (!is_reduced[static_cast<std::size_t>(axis)]) {
      out_stride[static_cast<std::size_t>(axis)] = stride;
      stride *= input_shape[axis];
    }
  }
  const std::int64_t count = input_shape.product();
  std::vector<std::int64_t> index(static_cast<std::size_t>(rank), 0);
  std::int64_t out_flat = 0;
  for (std::int64_t in_flat = 0; in_flat < count; ++in_flat) {
    fn(in_flat, out_flat);
    for (int axis = rank - 1; axis >= 0; --axis) {
      const auto a = static_cast<std::size_t>(axis);
      ++index[a];
      out_flat += out_stride[a];
      if (index[a] < input_shape[axis]) break;
      out_flat -= out_stride[a] * input_shape[axis];
      index[a] = 0;
    }
  }
}

std::string print_reduce(std::string_view scalar, const Attrs& attrs, int /*rank_hint*/) {
  const auto& axes = attrs.get_ints("axes");
  std::string text = fmt::format("CAReduce{{{}}}{{{}}}", scalar, fmt::join(axes, ","));
  if (attrs.get_bool_or("keepdims", false)) text += "{keepdims}";
  return text;
}

Variable expand_reduced_grad(const Variable& grad, const Variable& input, const Attrs& attrs) {
  if (attrs.get_bool_or("keepdims", false)) return grad;
  const std::vector<int> axes = reduced_axes(attrs, input.rank());
  std::vector<std::int64_t> pattern;
  int next = 0;
  for (int axis = 0; axis < input.rank(); ++axis) {
    if (std::find(axes.begin(), axes.end(), axis) != axes.end()) {
      pattern.push_back(kNewAxis);
    } else {
      pattern.push_back(next++);
    }
  }
  return dimshuffle(grad, pattern);
}

std::int64_t reduced_count(const Dims& shape, const std::vector<int>& axes) {
  std::int64_t count = 1;
  for (int axis : axes) count *= shape[axis];
  return count;
}

void require_nonempty_reduction(const Dims& shape, const std::vector<int>& axes,
                                std::string_view op_name) {
  std::int64_t kept_count = 1;
  for (int axis = 0; axis < shape.rank(); ++axis) {
    if (std::find(axes.begin(), axes.end(), axis) == axes.end()) kept_count *= shape[axis];
  }
  if (reduced_count(shape, axes) == 0 && kept_count > 0) {
    throw_error(ErrorKind::InvalidArgument,
                "{} of an empty extent has no identity: input shape {}, reduced axes {}", op_name,
                shape.to_string(), fmt::join(axes, ","));
  }
}

Cost reduce_cost(const CostContext& ctx) {
  const double count = static_cast<double>(ctx.input_shapes[0].product());
  return Cost{count, count * static_cast<double>(dtype_size(ctx.input_dtypes[0]))};
}

std::optional<ReducedBlock> reduced_block(const Tensor& x, const std::vector<int>& axes) {
  if (axes.empty() || x.numel() == 0) return std::nullopt;
  if (axes.back() - axes.front() != static_cast<int>(axes.size()) - 1) return std::nullopt;
  ReducedBlock block;
  block.outer_rank = axes.front();
  // From the last axis to the first reduced one, each stride is the size of what follows it.
  std::int64_t packed = 1;
  for (int axis = x.rank() - 1; axis >= axes.front(); --axis) {
    const std::int64_t extent = x.shape()[axis];
    if (extent != 1 && x.strides()[axis] != packed) return std::nullopt;
    packed *= extent;
    (axis > axes.back() ? block.inner : block.count) *= extent;
  }
  for (int axis = 0; axis < axes.front(); ++axis) block.outer *= x.shape()[axis];
  return block;
}

}  // namespace tscope::ops::detail
