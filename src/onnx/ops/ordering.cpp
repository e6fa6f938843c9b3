// SPDX-License-Identifier: Apache-2.0
// ONNX CumSum and TopK, composed from existing ops while there is no scan or sort op: CumSum is a
// product with a constant triangular matrix (O(n^2) flops along the axis, exact for floats and,
// through float64, for integers below 2^53); TopK takes k successive arg-extremes, masking each
// winner out (k small).
#include <fmt/format.h>

#include <limits>

#include "../converter.h"
#include "axis_order.h"
#include "shape_builder.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/shape.h"

namespace tscope::onnx {
namespace {

using Outputs = std::vector<Variable>;

std::int64_t known_extent(NodeContext& ctx, const Variable& x, std::int64_t axis, std::string_view op) {
  const std::int64_t extent = x.type().dims[static_cast<int>(axis)];
  if (extent == kUnknownDim) ctx.unsupported(fmt::format("{} along an axis of unknown extent", op));
  return extent;
}

Outputs convert_cum_sum(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const std::int64_t axis = ctx.axis(ctx.constant_ints(1, "axis").at(0), x.rank(), "axis");
  const bool exclusive = ctx.attribute_int("exclusive", 0) != 0;
  const bool reverse = ctx.attribute_int("reverse", 0) != 0;
  const std::int64_t n = known_extent(ctx, x, axis, "CumSum");
  const DType compute = is_floating(x.dtype()) ? x.dtype() : DType::Float64;
  // out[..., j] = sum_i x[..., i] * m[i, j], m selecting the i that precede (or follow) j.
  std::vector<double> m(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const bool take = reverse ? (exclusive ? i > j : i >= j) : (exclusive ? i < j : i <= j);
      m[static_cast<std::size_t>(i * n + j)] = take ? 1.0 : 0.0;
    }
  }
  const Variable triangle = constant(Tensor::from_doubles(compute, {n, n}, m));
  const AxisToLast order = axis_to_last(x.rank(), axis);
  const Variable moved = dimshuffle(x.dtype() == compute ? x : cast(x, compute), order.there);
  ShapeBuilder rows;
  rows.add_product_of(moved, 0, moved.rank() - 1);
  rows.add(n);
  ShapeBuilder unrows;
  for (int i = 0; i < moved.rank(); ++i) unrows.add_axis_of(moved, i);
  Variable result = dimshuffle(unrows.reshape(dot(rows.reshape(moved), triangle)), order.back);
  if (result.dtype() != x.dtype()) result = cast(result, x.dtype());
  return {result};
}

Outputs convert_top_k(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  if (!is_floating(x.dtype())) ctx.unsupported(fmt::format("TopK of {}", dtype_name(x.dtype())));
  const std::int64_t k = ctx.constant_ints(1, "K").at(0);
  const std::int64_t axis = ctx.axis(ctx.attribute_int("axis", -1), x.rank(), "axis");
  const bool largest = ctx.attribute_int("largest", 1) != 0;
  ctx.ignore_attribute("sorted");  // unsorted output may come in any order; sorted is one
  const std::int64_t n = known_extent(ctx, x, axis, "TopK");
  if (k < 0 || k > n) throw_error(ErrorKind::InvalidArgument, "K = {} for an axis of {}", k, n);
  std::vector<double> positions;
  for (std::int64_t i = 0; i < n; ++i) positions.push_back(static_cast<double>(i));
  Dims position_shape = Dims::filled(x.rank(), 1);
  position_shape[static_cast<int>(axis)] = n;
  const Variable position = constant(Tensor::from_doubles(DType::Int64, position_shape, positions));
  const double masked = largest ? -std::numeric_limits<double>::infinity()
                                : std::numeric_limits<double>::infinity();
  Variable remaining = x;
  std::vector<Variable> values;
  std::vector<Variable> indices;
  for (std::int64_t i = 0; i < k; ++i) {
    // The first extreme wins ties, which is ONNX's lower-index-first order.
    const Variable index = largest ? argmax(remaining, {axis}, true) : argmin(remaining, {axis}, true);
    values.push_back(largest ? max(remaining, {axis}, true) : min(remaining, {axis}, true));
    indices.push_back(index);
    if (i + 1 < k) remaining = switch_(eq(position, index), masked, remaining);
  }
  if (k == 1) return {values.front(), indices.front()};
  return {join(axis, values), join(axis, indices)};
}

}  // namespace

void register_ordering_converters(ConverterTable& table) {
  table.add("CumSum", 11, convert_cum_sum);
  table.add("TopK", 10, convert_top_k);
}

}  // namespace tscope::onnx
