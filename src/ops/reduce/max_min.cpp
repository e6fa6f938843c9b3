// SPDX-License-Identifier: Apache-2.0
// Max and Min: CAReduce{maximum} / CAReduce{minimum} over axes, keeping the input's dtype, and
// ExtremumGrad, the gradient of both. NaN propagates (a group holding a NaN reduces to NaN), as in
// NumPy. An empty reduced extent has no identity and raises InvalidArgument.
//
// Gradient: g flows to every element equal to the group's extreme. With ties, each tied element
// receives the full g (Theano's convention), so the gradient of max over [1, 1] is [1, 1] rather
// than [0.5, 0.5] or [1, 0].
#include <cmath>
#include <limits>

#include "reduce_common.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
template <bool kMax, class T>
T pick(T acc, T value) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(acc)) return acc;
    if (std::isnan(value)) return value;
  }
  if constexpr (kMax) {
    return value > acc ? value : acc;
  } else {
    return value < acc ? value : acc;
  }
}

template <bool kMax>
std::string_view reduction_name() {
  return kMax ? "max" : "min";
}

template <bool kMax>
void compute_extremum_reference(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int> axes = detail::reduced_axes(*ctx.attrs, x.rank());
  detail::require_nonempty_reduction(x.shape(), axes, reduction_name<kMax>());
  const bool keepdims = ctx.attrs->get_bool_or("keepdims", false);
  Tensor& out =
      ctx.allocate_output(0, x.dtype(), detail::reduced_dims(x.shape(), axes, keepdims));
  std::vector<double> best(static_cast<std::size_t>(out.numel()), 0.0);
  std::vector<bool> seen(best.size(), false);
  detail::for_each_reduced(x.shape(), axes, [&](std::int64_t in_flat, std::int64_t out_flat) {
    const auto group = static_cast<std::size_t>(out_flat);
    const double value = x.at(in_flat);
    best[group] = seen[group] ? pick<kMax>(best[group], value) : value;
    seen[group] = true;
  });
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* data = static_cast<T*>(out.raw_data());
    for (std::size_t i = 0; i < best.size(); ++i) data[i] = static_cast<T>(best[i]);
  });
}

// Fast path: the strided walk with an accumulator of the input's own type (exact for int64).
template <bool kMax>
void compute_extremum(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  detail::require_nonempty_reduction(x.shape(), detail::reduced_axes(*ctx.attrs, x.rank()),
                                     reduction_name<kMax>());
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    // bool folds as uint8 (std::vector<bool> has no contiguous storage).
    using Acc = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;
    Acc init{};
    if constexpr (std::is_floating_point_v<Acc>) {
      init = kMax ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
    } else {
      init = kMax ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
    }
    detail::fold_reduce<T, Acc>(
        ctx, x.dtype(), init, [](Acc acc, T value) { return pick<kMax>(acc, static_cast<Acc>(value)); },
        [](Acc acc) { return acc; });
  });
}

std::vector<Type> infer_extremum(const InferContext& ctx) {
  return detail::infer_reduce(ctx, nullptr);
}

std::vector<Variable> pullback_extremum(const PullbackContext& ctx) {
  const Variable& x = ctx.inputs[0];
  if (!is_floating(x.dtype())) return {Variable()};
  return {apply_op1(op_def("ExtremumGrad"), {x, ctx.outputs[0], ctx.output_grads[0]}, ctx.attrs,
                    std::source_location::current())};
}

std::string print_max(const OpDef&, const Attrs& attrs) {
  return detail::print_reduce("maximum", attrs);
}
std::string print_min(const OpDef&, const Attrs& attrs) {
  return detail::print_reduce("minimum", attrs);
}

// ExtremumGrad(x, y, g): y is the reduction's output; dx[i] = g[group(i)] where x[i] == y[group].
std::vector<Type> infer_extremum_grad(const InferContext& ctx) {
  const Type& x = ctx.input_type(0);
  const Type& y = ctx.input_type(1);
  const Type& g = ctx.input_type(2);
  const std::vector<int> axes = detail::reduced_axes(ctx.attrs, x.rank());
  const Dims expected =
      detail::reduced_dims(x.dims, axes, ctx.attrs.get_bool_or("keepdims", false));
  if (expected.rank() != g.rank() || expected.rank() != y.rank()) {
    throw_error(ErrorKind::ShapeMismatch,
                "ExtremumGrad: reduced value {} and gradient {} must have rank {}", y.to_string(),
                g.to_string(), expected.rank());
  }
  return {Type{g.dtype, x.dims}};
}

void compute_extremum_grad(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  const Tensor& g = ctx.input(2);
  const std::vector<int> axes = detail::reduced_axes(*ctx.attrs, x.rank());
  Tensor& out = ctx.allocate_output(0, g.dtype(), x.shape());
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* data = static_cast<T*>(out.raw_data());
    detail::for_each_reduced(x.shape(), axes, [&](std::int64_t in_flat, std::int64_t out_flat) {
      data[in_flat] = x.at(in_flat) == y.at(out_flat) ? static_cast<T>(g.at(out_flat)) : T{0};
    });
  });
}

std::string print_extremum_grad(const OpDef&, const Attrs& attrs) {
  return "ExtremumGrad" +
         detail::print_reduce("", attrs).substr(std::string("CAReduce{}").size());
}
}  // namespace

void register_max(OpRegistry& registry) {
  registry.add({.name = "Max",
                .family = "CAReduce",
                .summary = "maximum over axes",
                .num_inputs = 1,
                .infer = infer_extremum,
                .reference = {"ref", compute_extremum_reference<true>},
                .fast = {"cpu", compute_extremum<true>},
                .pullback = pullback_extremum,
                .cost = detail::reduce_cost,
                .print = print_max});
}

void register_min(OpRegistry& registry) {
  registry.add({.name = "Min",
                .family = "CAReduce",
                .summary = "minimum over axes",
                .num_inputs = 1,
                .infer = infer_extremum,
                .reference = {"ref", compute_extremum_reference<false>},
                .fast = {"cpu", compute_extremum<false>},
                .pullback = pullback_extremum,
                .cost = detail::reduce_cost,
                .print = print_min});
}

void register_extremum_grad(OpRegistry& registry) {
  registry.add({.name = "ExtremumGrad",
                .family = "ExtremumGrad",
                .summary = "gradient of Max/Min: g routed to the elements equal to the extreme",
                .num_inputs = 3,
                .infer = infer_extremum_grad,
                .reference = {"ref", compute_extremum_grad},
                .cost = detail::reduce_cost,
                .print = print_extremum_grad});
}

}  // namespace tscope::ops

namespace tscope {

Variable max(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims,
             const std::source_location& location) {
  return apply_op1(op_def("Max"), {x}, ops::detail::reduce_attrs(x, axes, keepdims), location);
}

Variable min(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims,
             const std::source_location& location) {
  return apply_op1(op_def("Min"), {x}, ops::detail::reduce_attrs(x, axes, keepdims), location);
}

}  // namespace tscope
