// SPDX-License-Identifier: Apache-2.0
// AveragePool and its gradient AveragePoolGrad (Theano's Pool{mode='average_*'} and
// AveragePoolGrad). `include_pad` chooses the divisor: the whole kernel volume, or only the window
// elements inside the input. Each op is linear and the other's adjoint, so both differentiate
// again without new ops. global_avg_pool() is a mean over the spatial axes.
#include <fmt/format.h>

#include <algorithm>

#include "conv_geometry.h"
#include "conv_nodes.h"
#include "pool_dnnl.h"
#include "pool_geometry.h"
#include "reference_loops.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/graph/provenance.h"
#include "tscope/ops/conv.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
constexpr const char* kBase = "AvgPool";

std::string label_of(const Attrs& attrs, std::string_view suffix) {
  return detail::pool_label(kBase, attrs) + std::string(suffix);
}

int full_rank(const Attrs& attrs) { return static_cast<int>(attrs.get_ints("strides").size()) + 2; }

detail::PoolKind pool_kind(const Attrs& attrs) {
  return attrs.get_bool("include_pad") ? detail::PoolKind::AverageIncludePad
                                       : detail::PoolKind::AverageExcludePad;
}

double divisor(const detail::PoolGeometry& g, const Attrs& attrs,
               const std::vector<std::int64_t>& window) {
  return attrs.get_bool("include_pad") ? static_cast<double>(g.window.kernel_volume())
                                       : static_cast<double>(window.size());
}

Cost avg_pool_cost(const CostContext& ctx) {
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  // AveragePoolGrad's second input is a shape vector, not data.
  const Dims& pooled = ctx.op.name == "AveragePool" ? ctx.output_shapes[0] : ctx.input_shapes[0];
  const Dims& full = ctx.op.name == "AveragePool" ? ctx.input_shapes[0] : ctx.output_shapes[0];
  const double elements = static_cast<double>(pooled.product() + full.product());
  return Cost{detail::pool_flops(pooled, ctx.attrs), elements * item};
}

// ---- AveragePool ----
std::vector<Type> infer_avg_pool(const InferContext& ctx) {
  const std::string label = label_of(ctx.attrs, "");
  detail::check_conv_float_inputs(ctx, {0}, label);
  const detail::PoolGeometry g = detail::pool_geometry(ctx.attrs, ctx.input_type(0).dims, label);
  return {Type{ctx.input_type(0).dtype, g.output_shape()}};
}

detail::PoolGeometry forward_geometry(const KernelContext& ctx) {
  return detail::pool_geometry(*ctx.attrs, ctx.input(0).shape(), label_of(*ctx.attrs, ""));
}

void compute_avg_pool_reference(KernelContext& ctx) {
  const detail::PoolGeometry g = forward_geometry(ctx);
  const std::vector<double> x = ctx.input(0).to_doubles();
  Tensor& y = ctx.allocate_output(0, ctx.input(0).dtype(), g.output_shape());
  std::vector<double> values(static_cast<std::size_t>(y.numel()));
  detail::for_each_pool_window(g, [&](std::int64_t yi, const std::vector<std::int64_t>& window) {
    double total = 0;
    for (std::int64_t index : window) total += x[static_cast<std::size_t>(index)];
    values[static_cast<std::size_t>(yi)] = total / divisor(g, *ctx.attrs, window);
  });
  detail::store_doubles(y, values);
}

void compute_avg_pool_dnnl(KernelContext& ctx) {
  const detail::PoolGeometry g = forward_geometry(ctx);
  const Tensor x = ctx.input(0).contiguous();
  Tensor& y = ctx.allocate_output(0, x.dtype(), g.output_shape());
  if (y.numel() == 0 || !detail::run_pool_forward_dnnl(ctx, pool_kind(*ctx.attrs), g, x, y)) {
    compute_avg_pool_reference(ctx);
  }
}

std::vector<Variable> pullback_avg_pool(const PullbackContext& ctx) {
  return {detail::avg_pool_grad_node(ctx.output_grads[0], detail::shape_variable(ctx.inputs[0]),
                                     ctx.attrs)};
}

// ---- AveragePoolGrad ----
std::vector<Type> infer_avg_pool_grad(const InferContext& ctx) {
  const std::string label = label_of(ctx.attrs, "Grad");
  detail::check_conv_float_inputs(ctx, {0}, label);
  const Dims x = detail::static_shape_input(ctx.inputs[1], full_rank(ctx.attrs), label);
  const Dims& dy = ctx.input_type(0).dims;
  const detail::PoolGeometry g = detail::pool_geometry(ctx.attrs, x, label);
  detail::check_pool_output_shape(g, dy, "dy", label);
  Dims dims = g.input_shape();
  for (int axis = 0; axis < 2 && axis < dy.rank(); ++axis) {
    if (dims[axis] == kUnknownDim) dims[axis] = dy[axis];
  }
  return {Type{ctx.input_type(0).dtype, dims}};
}

detail::PoolGeometry backward_geometry(const KernelContext& ctx) {
  const std::string label = label_of(*ctx.attrs, "Grad");
  const Dims x = detail::shape_from_tensor(ctx.input(1), full_rank(*ctx.attrs), label);
  const detail::PoolGeometry g = detail::pool_geometry(*ctx.attrs, x, label);
  detail::check_pool_output_shape(g, ctx.input(0).shape(), "dy", label);
  return g;
}

void compute_avg_pool_grad_reference(KernelContext& ctx) {
  const detail::PoolGeometry g = backward_geometry(ctx);
  const std::vector<double> dy = ctx.input(0).to_doubles();
  Tensor& dx = ctx.allocate_output(0, ctx.input(0).dtype(), g.input_shape());
  std::vector<double> total(static_cast<std::size_t>(dx.numel()), 0.0);
  detail::for_each_pool_window(g, [&](std::int64_t yi, const std::vector<std::int64_t>& window) {
    const double share = dy[static_cast<std::size_t>(yi)] / divisor(g, *ctx.attrs, window);
    for (std::int64_t index : window) total[static_cast<std::size_t>(index)] += share;
  });
  detail::store_doubles(dx, total);
}

void compute_avg_pool_grad_dnnl(KernelContext& ctx) {
  const detail::PoolGeometry g = backward_geometry(ctx);
  const Tensor dy = ctx.input(0).contiguous();
  Tensor& dx = ctx.allocate_output(0, dy.dtype(), g.input_shape());
  if (dy.numel() == 0 ||
      !detail::run_avg_pool_backward_dnnl(ctx, pool_kind(*ctx.attrs), g, dy, dx)) {
    compute_avg_pool_grad_reference(ctx);
  }
}

std::vector<Variable> pullback_avg_pool_grad(const PullbackContext& ctx) {
  return {detail::avg_pool_node(ctx.output_grads[0], ctx.attrs), Variable()};
}

std::string print_with(const Attrs& attrs, std::string_view suffix) {
  return detail::pool_printed_name(kBase, suffix, attrs);
}

Variable avg_pool_with_rank(const Variable& x, const PoolOptions& options, int spatial_rank,
                            const std::source_location& location) {
  const Attrs attrs = detail::pool_attrs(options, spatial_rank, /*with_include_pad=*/true,
                                         fmt::format("{}{}d", kBase, spatial_rank));
  return apply_op1(op_def("AveragePool"), {x}, attrs, location);
}
}  // namespace

namespace detail {
Variable avg_pool_node(const Variable& x, const Attrs& attrs) {
  return apply_op1(op_def("AveragePool"), {x}, attrs, std::source_location::current());
}
Variable avg_pool_grad_node(const Variable& dy, const Variable& input_shape, const Attrs& attrs) {
  return apply_op1(op_def("AveragePoolGrad"), {dy, input_shape}, attrs,
                   std::source_location::current());
}
}  // namespace detail

void register_avg_pool(OpRegistry& registry) {
  registry.add({.name = "AveragePool",
                .family = "AveragePool",
                .summary = "2-D/3-D average pooling; include_pad: pads count in the divisor",
                .num_inputs = 1,
                .infer = infer_avg_pool,
                .reference = {"ref", compute_avg_pool_reference},
                .fast = {"dnnl", compute_avg_pool_dnnl,
                         [](std::span<const Variable> inputs, const Attrs&) {
                           return detail::inputs_are_float32(inputs, {0});
                         }},
                .pullback = pullback_avg_pool,
                .cost = avg_pool_cost,
                .print = [](const OpDef&, const Attrs& attrs) { return print_with(attrs, ""); }});
  registry.add({.name = "AveragePoolGrad",
                .family = "AveragePoolGrad",
                .summary = "gradient of AveragePool, from (dy, input shape)",
                .num_inputs = 2,
                .infer = infer_avg_pool_grad,
                .reference = {"ref", compute_avg_pool_grad_reference},
                .fast = {"dnnl", compute_avg_pool_grad_dnnl,
                         [](std::span<const Variable> inputs, const Attrs&) {
                           return detail::inputs_are_float32(inputs, {0});
                         }},
                .pullback = pullback_avg_pool_grad,
                .cost = avg_pool_cost,
                .print = [](const OpDef&, const Attrs& attrs) { return print_with(attrs, "Grad"); }});
}

}  // namespace tscope::ops

namespace tscope {

Variable avg_pool(const Variable& x, const PoolOptions& options,
                  const std::source_location& location) {
  return ops::avg_pool_with_rank(x, options, std::clamp(x.rank() - 2, 1, 3), location);
}

Variable avg_pool2d(const Variable& x, const PoolOptions& options,
                    const std::source_location& location) {
  return ops::avg_pool_with_rank(x, options, 2, location);
}

Variable avg_pool3d(const Variable& x, const PoolOptions& options,
                    const std::source_location& location) {
  return ops::avg_pool_with_rank(x, options, 3, location);
}

Variable avg_pool_grad(const Variable& dy, const Variable& input_shape, const PoolOptions& options,
                       const std::source_location& location) {
  const int spatial_rank = std::clamp(dy.rank() - 2, 1, 3);
  const Attrs attrs = ops::detail::pool_attrs(options, spatial_rank, true,
                                              fmt::format("AvgPool{}dGrad", spatial_rank));
  return apply_op1(op_def("AveragePoolGrad"), {dy, input_shape}, attrs, location);
}

Variable global_avg_pool(const Variable& x, const std::source_location& location) {
  ProvenanceScope scope("global_avg_pool", location);
  if (x.rank() < 3) {
    throw_error(ErrorKind::TypeMismatch,
                "global_avg_pool: x {} must have rank >= 3 (N, C, spatial...)", x.type().to_string());
  }
  std::vector<std::int64_t> spatial_axes;
  for (int axis = 2; axis < x.rank(); ++axis) spatial_axes.push_back(axis);
  return mean(x, spatial_axes, /*keepdims=*/true, location);
}

}  // namespace tscope
