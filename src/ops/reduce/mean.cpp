// SPDX-License-Identifier: Apache-2.0
// Mean over axes, and MeanGrad, its gradient: g / count broadcast back to the input's shape. A
// dedicated gradient op because the count is known only at run time when dims are symbolic.
#include <algorithm>
#include <type_traits>

#include "reduce_common.h"
#include "tscope/core/strided_copy.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope::ops {
namespace {
DType mean_dtype(DType input) { return is_floating(input) ? input : DType::Float64; }

std::vector<Type> infer_mean(const InferContext& ctx) { return detail::infer_reduce(ctx, mean_dtype); }

void compute_mean(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int> axes = detail::reduced_axes(*ctx.attrs, x.rank());
  const bool keepdims = ctx.attrs->get_bool_or("keepdims", false);
  Tensor& out = ctx.allocate_output(0, mean_dtype(x.dtype()), detail::reduced_dims(x.shape(), axes, keepdims));
  std::vector<double> totals(static_cast<std::size_t>(out.numel()), 0.0);
  detail::for_each_reduced(x.shape(), axes, [&](std::int64_t in_flat, std::int64_t out_flat) {
    totals[static_cast<std::size_t>(out_flat)] += x.at(in_flat);
  });
  const double count = static_cast<double>(detail::reduced_count(x.shape(), axes));
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* data = static_cast<T*>(out.raw_data());
    for (std::size_t i = 0; i < totals.size(); ++i) data[i] = static_cast<T>(totals[i] / count);
  });
}

// Fast path: Sum's sums over one run of consecutive axes whose elements lie packed (global average
// pooling of a plain or a channel-blocked value, or of a channel slice), otherwise the strided walk
// of Sum with a double (or int64-to-double) accumulator; then one division. An empty reduced
// extent gives NaN, as in NumPy.
void compute_mean_fast(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const double count = static_cast<double>(
      detail::reduced_count(x.shape(), detail::reduced_axes(*ctx.attrs, x.rank())));
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto divide = [count](double acc) { return acc / count; };
    if (detail::sum_axis_block<T>(ctx, mean_dtype(x.dtype()), divide)) return;
    detail::fold_reduce<T, double>(
        ctx, mean_dtype(x.dtype()), 0.0,
        [](double acc, T value) { return acc + static_cast<double>(value); },
        divide);
  });
}

std::vector<Variable> pullback_mean(const PullbackContext& ctx) {
  const Variable& x = ctx.inputs[0];
  if (!is_floating(x.dtype())) return {Variable()};
  return {apply_op1(op_def("MeanGrad"), {x, ctx.output_grads[0]}, ctx.attrs,
                    std::source_location::current())};
}

std::string print_mean(const OpDef&, const Attrs& attrs) { return detail::print_reduce("mean", attrs); }

// MeanGrad(x, g): x gives the shape; result[i] = g[reduced(i)] / count.
std::vector<Type> infer_mean_grad(const InferContext& ctx) {
  const Type& x = ctx.input_type(0);
  const Type& g = ctx.input_type(1);
  const std::vector<int> axes = detail::reduced_axes(ctx.attrs, x.rank());
  const Dims expected = detail::reduced_dims(x.dims, axes, ctx.attrs.get_bool_or("keepdims", false));
  if (expected.rank() != g.rank()) {
    throw_error(ErrorKind::ShapeMismatch, "MeanGrad: gradient has rank {}, expected {}", g.rank(),
                expected.rank());
  }
  return {Type{g.dtype, x.dims}};
}

void compute_mean_grad(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& g = ctx.input(1);
  const std::vector<int> axes = detail::reduced_axes(*ctx.attrs, x.rank());
  Tensor& out = ctx.allocate_output(0, g.dtype(), x.shape());
  const double count = static_cast<double>(detail::reduced_count(x.shape(), axes));
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* data = static_cast<T*>(out.raw_data());
    detail::for_each_reduced(x.shape(), axes, [&](std::int64_t in_flat, std::int64_t out_flat) {
      data[in_flat] = static_cast<T>(g.at(out_flat) / count);
    });
  });
}

// g's strides over x's axes: 0 along the reduced ones, g's own stride along the others.
Dims grad_strides_over_input(const Tensor& g, int rank, const std::vector<int>& axes,
                             bool keepdims) {
  Dims strides = Dims::filled(rank, 0);
  int g_axis = 0;
  for (int axis = 0; axis < rank; ++axis) {
    const bool reduced = std::ranges::find(axes, axis) != axes.end();
    if (!reduced) strides[axis] = g.strides()[g_axis];
    if (!reduced || keepdims) ++g_axis;
  }
  return strides;
}

// Fast path: g / count computed once per element of g, then broadcast into the output by the
// strided copy of broadcast views (copy_strided: merged axes, rows, runs of one value).
void compute_mean_grad_fast(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& g = ctx.input(1);
  if (g.dtype() != DType::Float32 && g.dtype() != DType::Float64) {
    compute_mean_grad(ctx);
    return;
  }
  const std::vector<int> axes = detail::reduced_axes(*ctx.attrs, x.rank());
  const bool keepdims = ctx.attrs->get_bool_or("keepdims", false);
  Tensor& out = ctx.allocate_output(0, g.dtype(), x.shape());
  if (out.numel() == 0) return;
  const double scale = 1.0 / static_cast<double>(detail::reduced_count(x.shape(), axes));
  Tensor scaled = g.clone();
  visit_dtype(scaled.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      T* data = static_cast<T*>(scaled.raw_data());
      const T factor = static_cast<T>(scale);
      for (std::int64_t i = 0; i < scaled.numel(); ++i) data[i] *= factor;
    }
  });
  tscope::detail::copy_strided(scaled.raw_data(), x.shape(),
                               grad_strides_over_input(scaled, x.rank(), axes, keepdims),
                               dtype_size(scaled.dtype()), out.raw_data());
}

std::vector<Variable> pullback_mean_grad(const PullbackContext& ctx) {
  // Linear in g: the adjoint of "broadcast and divide" is "mean over the same axes".
  Variable result = mean(ctx.output_grads[0], ctx.attrs.get_ints("axes"),
                         ctx.attrs.get_bool_or("keepdims", false));
  return {Variable(), result};
}

std::string print_mean_grad(const OpDef&, const Attrs& attrs) {
  return "MeanGrad" + detail::print_reduce("mean", attrs).substr(std::string("CAReduce{mean}").size());
}
}  // namespace

void register_mean(OpRegistry& registry) {
  registry.add({.name = "Mean",
                .family = "CAReduce",
                .summary = "arithmetic mean over axes",
                .num_inputs = 1,
                .infer = infer_mean,
                .reference = {"ref", compute_mean},
                .fast = {"cpu", compute_mean_fast},
                .pullback = pullback_mean,
                .cost = detail::reduce_cost,
                .print = print_mean});
}

void register_mean_grad(OpRegistry& registry) {
  registry.add({.name = "MeanGrad",
                .family = "MeanGrad",
                .summary = "gradient of Mean: g / count broadcast to the input's shape",
                .num_inputs = 2,
                .infer = infer_mean_grad,
                .reference = {"ref", compute_mean_grad},
                .fast = {"cpu", compute_mean_grad_fast},
                .pullback = pullback_mean_grad,
                .cost = detail::reduce_cost,
                .print = print_mean_grad});
}

}  // namespace tscope::ops

namespace tscope {

Variable mean(const Variable& x, const std::source_location& location) {
  return mean(x, {}, false, location);
}

Variable mean(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims,
              const std::source_location& location) {
  return apply_op1(op_def("Mean"), {x}, ops::detail::reduce_attrs(x, axes, keepdims), location);
}

}  // namespace tscope
