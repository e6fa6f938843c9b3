// SPDX-License-Identifier: Apache-2.0
// Sum: CAReduce{add} over axes. Integers and bool accumulate into int64.
#include <cstring>

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

// Fast path: a contiguous input reduced over a trailing or leading block of axes becomes a
// (outer, reduced, inner) walk with typed accumulators.
template <class T, class Acc>
void sum_blocked(const T* in, Acc* out, std::int64_t outer, std::int64_t reduced,
                 std::int64_t inner) {
  for (std::int64_t o = 0; o < outer; ++o) {
    Acc* out_row = out + o * inner;
    for (std::int64_t i = 0; i < inner; ++i) out_row[i] = 0;
    const T* block = in + o * reduced * inner;
    for (std::int64_t r = 0; r < reduced; ++r) {
      const T* row = block + r * inner;
      for (std::int64_t i = 0; i < inner; ++i) out_row[i] += static_cast<Acc>(row[i]);
    }
  }
}

void compute_sum(KernelContext& ctx) {
  const Tensor input = ctx.input(0).contiguous();
  const std::vector<int> axes = detail::reduced_axes(*ctx.attrs, input.rank());
  const bool keepdims = ctx.attrs->get_bool_or("keepdims", false);
  const bool consecutive = axes.empty() || axes.back() - axes.front() + 1 == static_cast<int>(axes.size());
  if (!consecutive) {
    compute_sum_reference(ctx);
    return;
  }
  const DType out_dtype = sum_dtype(input.dtype());
  Tensor& out = ctx.allocate_output(0, out_dtype, detail::reduced_dims(input.shape(), axes, keepdims));
  std::int64_t outer = 1, reduced = 1, inner = 1;
  for (int axis = 0; axis < input.rank(); ++axis) {
    if (!axes.empty() && axis < axes.front()) {
      outer *= input.shape()[axis];
    } else if (!axes.empty() && axis <= axes.back()) {
      reduced *= input.shape()[axis];
    } else {
      inner *= input.shape()[axis];
    }
  }
  if (axes.empty()) {
    std::memcpy(out.raw_data(), input.raw_data(), static_cast<std::size_t>(input.nbytes()));
    return;
  }
  visit_dtype(input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      sum_blocked<T, T>(static_cast<const T*>(input.raw_data()), static_cast<T*>(out.raw_data()),
                        outer, reduced, inner);
    } else {
      sum_blocked<T, std::int64_t>(static_cast<const T*>(input.raw_data()),
                                   static_cast<std::int64_t*>(out.raw_data()), outer, reduced, inner);
    }
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
