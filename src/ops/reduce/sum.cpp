// SPDX-License-Identifier: Apache-2.0
// Sum: CAReduce{add} over axes. Integers and bool accumulate into int64.
#include "reduce_common.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
DType sum_dtype(DType input) { return is_floating(input) ? input : DType::Int64; }

std::vector<Type> infer_sum(const InferContext& ctx) { return detail::infer_reduce(ctx, sum_dtype); }

void compute_sum_reference(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int> axes = detail::reduced_axes(*ctx.attrs, x.rank());
  const bool keepdims = ctx.attrs->get_bool_or("keepdims", false);
  Tensor& out = ctx.allocate_output(0, sum_dtype(x.dtype()), detail::reduced_dims(x.shape(), axes, keepdims));
  std::vector<double> totals(static_cast<std::size_t>(out.numel()), 0.0);
  detail::for_each_reduced(x.shape(), axes, [&](std::int64_t in_flat, std::int64_t out_flat) {
    totals[static_cast<std::size_t>(out_flat)] += x.at(in_flat);
  });
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* data = static_cast<T*>(out.raw_data());
    for (std::size_t i = 0; i < totals.size(); ++i) data[i] = static_cast<T>(totals[i]);
  });
}

// Fast path: a typed strided walk (reduce_common.h) over any set of axes and any strides, with
// no copy of the input. Floats accumulate in double and integers in int64: a float32 sum of a
// long row then carries one rounding at the end instead of one per element (a 1e7-element row of
// 0.1f stays within 1e-7 relative instead of drifting by percents).
void compute_sum(KernelContext& ctx) {
  const DType out_dtype = sum_dtype(ctx.input(0).dtype());
  visit_dtype(ctx.input(0).dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Acc = detail::WideAccumulator<T>;
    if (detail::sum_axis_block<T>(ctx, out_dtype, [](double total) { return total; })) return;
    detail::fold_reduce<T, Acc>(
        ctx, out_dtype, Acc{0}, [](Acc acc, T value) { return detail::wrapping_add(acc, static_cast<Acc>(value)); },
        [](Acc acc) { return acc; });
  });
}

std::vector<Variable> pullback_sum(const PullbackContext& ctx) {
  const Variable& x = ctx.inputs[0];
  if (!is_floating(x.dtype())) return {Variable()};
  return {second(x, detail::expand_reduced_grad(ctx.output_grads[0], x, ctx.attrs))};
}

std::string print_sum(const OpDef&, const Attrs& attrs) { return detail::print_reduce("add", attrs); }
}  // namespace

void register_sum(OpRegistry& registry) {
  registry.add({.name = "Sum",
                .family = "CAReduce",
                .summary = "sum over axes",
                .num_inputs = 1,
                .infer = infer_sum,
                .reference = {"ref", compute_sum_reference},
                .fast = {"cpu", compute_sum},
                .pullback = pullback_sum,
                .cost = detail::reduce_cost,
                .print = print_sum});
}

}  // namespace tscope::ops

namespace tscope {

Variable sum(const Variable& x, const std::source_location& location) {
  return sum(x, {}, false, location);
}

Variable sum(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims,
             const std::source_location& location) {
  return apply_op1(op_def("Sum"), {x}, ops::detail::reduce_attrs(x, axes, keepdims), location);
}

}  // namespace tscope
