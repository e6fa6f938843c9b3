// SPDX-License-Identifier: Apache-2.0
// ONNX reductions (ReduceSum/Mean/Max/Min/Prod and the composed ReduceL1/L2/SumSquare/LogSum/
// LogSumExp) and ArgMax/ArgMin.
#include "../converter.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/shape.h"

namespace tscope::onnx {
namespace {

using Outputs = std::vector<Variable>;
using ReduceBuilder = Variable (*)(const Variable&, const std::vector<std::int64_t>&, bool,
                                   const std::source_location&);

/// The axes to reduce: the `axes` attribute, or (ReduceSum from 13, every reduction from 18) the
/// optional second input. Empty: every axis, unless noop_with_empty_axes asks for the identity
/// (reported through `noop`).
std::vector<std::int64_t> reduction_axes(NodeContext& ctx, bool axes_as_input, bool& noop) {
  const Variable& x = ctx.input(0);
  std::vector<std::int64_t> axes;
  if (axes_as_input) {
    if (ctx.has_input(1)) axes = ctx.constant_ints(1, "axes");
    noop = axes.empty() && ctx.attribute_int("noop_with_empty_axes", 0) != 0;
  } else {
    axes = ctx.attribute_ints("axes", {});
    noop = false;
  }
  if (axes.empty() && !noop) {
    for (int axis = 0; axis < x.rank(); ++axis) axes.push_back(axis);
  }
  for (std::int64_t& axis : axes) axis = ctx.axis(axis, x.rank(), "axis");
  return axes;
}

Variable reduce_with(NodeContext& ctx, ReduceBuilder build, const Variable& x, bool axes_as_input) {
  bool noop = false;
  const std::vector<std::int64_t> axes = reduction_axes(ctx, axes_as_input, noop);
  if (noop) return x;
  const bool keepdims = ctx.attribute_int("keepdims", 1) != 0;
  Variable result = build(x, axes, keepdims, std::source_location::current());
  // ONNX keeps the input type (our sums of integers widen to int64, means of integers to float).
  if (result.dtype() != ctx.input(0).dtype()) result = cast(result, ctx.input(0).dtype());
  return result;
}

Variable sum_builder(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims,
                     const std::source_location& location) {
  return sum(x, axes, keepdims, location);
}
Variable mean_builder(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims,
                      const std::source_location& location) {
  return mean(x, axes, keepdims, location);
}

template <ReduceBuilder Build, bool kAxesAsInput>
Outputs reduce(NodeContext& ctx) {
  return {reduce_with(ctx, Build, ctx.input(0), kAxesAsInput)};
}

template <bool kAxesAsInput>
Outputs reduce_l1(NodeContext& ctx) {
  return {reduce_with(ctx, sum_builder, abs(ctx.input(0)), kAxesAsInput)};
}
template <bool kAxesAsInput>
Outputs reduce_sum_square(NodeContext& ctx) {
  return {reduce_with(ctx, sum_builder, sqr(ctx.input(0)), kAxesAsInput)};
}
template <bool kAxesAsInput>
Outputs reduce_l2(NodeContext& ctx) {
  return {sqrt(reduce_with(ctx, sum_builder, sqr(ctx.input(0)), kAxesAsInput))};
}
template <bool kAxesAsInput>
Outputs reduce_log_sum(NodeContext& ctx) {
  return {log(reduce_with(ctx, sum_builder, ctx.input(0), kAxesAsInput))};
}
template <bool kAxesAsInput>
Outputs reduce_log_sum_exp(NodeContext& ctx) {
  return {log(reduce_with(ctx, sum_builder, exp(ctx.input(0)), kAxesAsInput))};
}

template <bool kMax>
Outputs arg_reduce(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const std::int64_t axis = ctx.axis(ctx.attribute_int("axis", 0), x.rank(), "axis");
  const bool keepdims = ctx.attribute_int("keepdims", 1) != 0;
  if (ctx.attribute_int("select_last_index", 0) == 0) {
    return {kMax ? argmax(x, {axis}, keepdims) : argmin(x, {axis}, keepdims)};
  }
  // The last of equal extremes: the first one along the reversed axis, counted from the end.
  IndexList reverse(static_cast<std::size_t>(axis), Index(slice()));
  reverse.emplace_back(slice(none, none, -1));
  const Variable reversed = subtensor(x, reverse);
  const Variable index = kMax ? argmax(reversed, {axis}, keepdims) : argmin(reversed, {axis}, keepdims);
  const std::int64_t extent = x.type().dims[static_cast<int>(axis)];
  if (extent != kUnknownDim) return {-index + static_cast<double>(extent - 1)};
  return {shape_i(x, axis) - 1 - index};
}

}  // namespace

void register_reduce_converters(ConverterTable& table) {
  table.add("ArgMax", 1, arg_reduce<true>);
  table.add("ArgMin", 1, arg_reduce<false>);
  table.add("ReduceL1", 1, reduce_l1<false>);
  table.add("ReduceL2", 1, reduce_l2<false>);
  table.add("ReduceLogSum", 1, reduce_log_sum<false>);
  table.add("ReduceLogSumExp", 1, reduce_log_sum_exp<false>);
  table.add("ReduceMax", 1, reduce<max, false>);
  table.add("ReduceMean", 1, reduce<mean_builder, false>);
  table.add("ReduceMin", 1, reduce<min, false>);
  table.add("ReduceProd", 1, reduce<prod, false>);
  table.add("ReduceSum", 1, reduce<sum_builder, false>);
  table.add("ReduceSum", 13, reduce<sum_builder, true>);
  table.add("ReduceSumSquare", 1, reduce_sum_square<false>);
}

}  // namespace tscope::onnx
