// SPDX-License-Identifier: Apache-2.0
// MaxPool, its gradient MaxPoolGrad and that gradient's gradient MaxPoolGradGrad (one family, as
// Theano's Pool / MaxPoolGrad / DownsampleFactorMaxGradGrad). Padded positions never win; on ties
// the first maximum in row-major window order wins in the reference kernels (oneDNN picks one of
// the tied elements). MaxPoolGrad routes dy to the maxima and MaxPoolGradGrad reads h there: each
// is linear in its second input and the other's adjoint, and both are constant in x almost
// everywhere, so the family is closed under differentiation.
#include <fmt/format.h>

#include <algorithm>

#include "conv_geometry.h"
#include "conv_nodes.h"
#include "pool_dnnl.h"
#include "pool_geometry.h"
#include "reference_loops.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/conv.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
constexpr const char* kBase = "MaxPool";

std::string label_of(const Attrs& attrs, std::string_view suffix) {
  return detail::pool_label(kBase, attrs) + std::string(suffix);
}

// Flat x index of the window's maximum (the first one on ties).
std::int64_t window_argmax(const std::vector<double>& x, const std::vector<std::int64_t>& window) {
  std::int64_t best = window.front();
  for (std::int64_t index : window) {
    if (x[static_cast<std::size_t>(index)] > x[static_cast<std::size_t>(best)]) best = index;
  }
  return best;
}

detail::PoolGeometry kernel_geometry(const KernelContext& ctx, std::string_view suffix) {
  return detail::pool_geometry(*ctx.attrs, ctx.input(0).shape(), label_of(*ctx.attrs, suffix));
}

Cost max_pool_cost(const CostContext& ctx) {
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  double elements = static_cast<double>(ctx.output_shapes[0].product());
  for (const Dims& shape : ctx.input_shapes) elements += static_cast<double>(shape.product());
  // The pooled shape: the output of MaxPool and MaxPoolGradGrad, the dy of MaxPoolGrad.
  const Dims& pooled = ctx.op.name == "MaxPoolGrad" ? ctx.input_shapes[1] : ctx.output_shapes[0];
  return Cost{detail::pool_flops(pooled, ctx.attrs), elements * item};
}

// ---- MaxPool ----
std::vector<Type> infer_max_pool(const InferContext& ctx) {
  const std::string label = label_of(ctx.attrs, "");
  detail::check_conv_float_inputs(ctx, {0}, label);
  const detail::PoolGeometry g = detail::pool_geometry(ctx.attrs, ctx.input_type(0).dims, label);
  return {Type{ctx.input_type(0).dtype, g.output_shape()}};
}

void compute_max_pool_reference(KernelContext& ctx) {
  const detail::PoolGeometry g = kernel_geometry(ctx, "");
  const std::vector<double> x = ctx.input(0).to_doubles();
  Tensor& y = ctx.allocate_output(0, ctx.input(0).dtype(), g.output_shape());
  std::vector<double> values(static_cast<std::size_t>(y.numel()));
  detail::for_each_pool_window(g, [&](std::int64_t yi, const std::vector<std::int64_t>& window) {
    values[static_cast<std::size_t>(yi)] = x[static_cast<std::size_t>(window_argmax(x, window))];
  });
  detail::store_doubles(y, values);
}

void compute_max_pool_dnnl(KernelContext& ctx) {
  const detail::PoolGeometry g = kernel_geometry(ctx, "");
  const Tensor x = ctx.input(0).contiguous();
  Tensor& y = ctx.allocate_output(0, x.dtype(), g.output_shape());
  if (y.numel() == 0 ||
      !detail::run_pool_forward_dnnl(ctx, detail::PoolKind::Max, g, x, y)) {
    compute_max_pool_reference(ctx);
  }
}

std::vector<Variable> pullback_max_pool(const PullbackContext& ctx) {
  return {detail::max_pool_grad_node(ctx.inputs[0], ctx.output_grads[0], ctx.attrs)};
}

// ---- MaxPoolGrad ----
std::vector<Type> infer_max_pool_grad(const InferContext& ctx) {
  const std::string label = label_of(ctx.attrs, "Grad");
  detail::check_conv_float_inputs(ctx, {0, 1}, label);
  const detail::PoolGeometry g = detail::pool_geometry(ctx.attrs, ctx.input_type(0).dims, label);
  detail::check_pool_output_shape(g, ctx.input_type(1).dims, "dy", label);
  return {ctx.input_type(0)};
}

void compute_max_pool_grad_reference(KernelContext& ctx) {
  const detail::PoolGeometry g = kernel_geometry(ctx, "Grad");
  detail::check_pool_output_shape(g, ctx.input(1).shape(), "dy", label_of(*ctx.attrs, "Grad"));
  const std::vector<double> x = ctx.input(0).to_doubles();
  const std::vector<double> dy = ctx.input(1).to_doubles();
  Tensor& dx = ctx.allocate_output(0, ctx.input(0).dtype(), ctx.input(0).shape());
  std::vector<double> total(x.size(), 0.0);
  detail::for_each_pool_window(g, [&](std::int64_t yi, const std::vector<std::int64_t>& window) {
    total[static_cast<std::size_t>(window_argmax(x, window))] += dy[static_cast<std::size_t>(yi)];
  });
  detail::store_doubles(dx, total);
}

void compute_max_pool_grad_dnnl(KernelContext& ctx) {
  const detail::PoolGeometry g = kernel_geometry(ctx, "Grad");
  detail::check_pool_output_shape(g, ctx.input(1).shape(), "dy", label_of(*ctx.attrs, "Grad"));
  const Tensor x = ctx.input(0).contiguous();
  const Tensor dy = ctx.input(1).contiguous();
  Tensor& dx = ctx.allocate_output(0, x.dtype(), x.shape());
  if (dy.numel() == 0 || !detail::run_max_pool_backward_dnnl(ctx, g, x, dy, dx)) {
    compute_max_pool_grad_reference(ctx);
  }
}

std::vector<Variable> pullback_max_pool_grad(const PullbackContext& ctx) {
  // Zero almost everywhere in x (the maxima do not move under small changes): disconnected.
  return {Variable(), detail::max_pool_grad_grad_node(ctx.inputs[0], ctx.output_grads[0], ctx.attrs)};
}

// ---- MaxPoolGradGrad ----
std::vector<Type> infer_max_pool_grad_grad(const InferContext& ctx) {
  const std::string label = label_of(ctx.attrs, "GradGrad");
  detail::check_conv_float_inputs(ctx, {0, 1}, label);
  const Type& x = ctx.input_type(0);
  const Type& h = ctx.input_type(1);
  const detail::PoolGeometry g = detail::pool_geometry(ctx.attrs, x.dims, label);
  if (h.rank() != x.rank()) {
    throw_error(ErrorKind::TypeMismatch, "{}: h {} must have the rank of x {}", label,
                h.to_string(), x.to_string());
  }
  for (int axis = 0; axis < x.rank(); ++axis) {
    if (x.dims[axis] != kUnknownDim && h.dims[axis] != kUnknownDim && x.dims[axis] != h.dims[axis]) {
      throw_error(ErrorKind::ShapeMismatch, "{}: h {} must have the shape of x {}", label,
                  h.dims.to_string(), x.dims.to_string());
    }
  }
  return {Type{x.dtype, g.output_shape()}};
}

void compute_max_pool_grad_grad_reference(KernelContext& ctx) {
  const std::string label = label_of(*ctx.attrs, "GradGrad");
  const detail::PoolGeometry g = kernel_geometry(ctx, "GradGrad");
  if (!(ctx.input(1).shape() == ctx.input(0).shape())) {
    throw_error(ErrorKind::ShapeMismatch, "{}: h {} must have the shape of x {}", label,
                ctx.input(1).shape().to_string(), ctx.input(0).shape().to_string());
  }
  const std::vector<double> x = ctx.input(0).to_doubles();
  const std::vector<double> h = ctx.input(1).to_doubles();
  Tensor& y = ctx.allocate_output(0, ctx.input(0).dtype(), g.output_shape());
  std::vector<double> values(static_cast<std::size_t>(y.numel()));
  detail::for_each_pool_window(g, [&](std::int64_t yi, const std::vector<std::int64_t>& window) {
    values[static_cast<std::size_t>(yi)] = h[static_cast<std::size_t>(window_argmax(x, window))];
  });
  detail::store_doubles(y, values);
}

std::vector<Variable> pullback_max_pool_grad_grad(const PullbackContext& ctx) {
  return {Variable(), detail::max_pool_grad_node(ctx.inputs[0], ctx.output_grads[0], ctx.attrs)};
}

std::string print_with(const Attrs& attrs, std::string_view suffix) {
  return detail::pool_printed_name(kBase, suffix, attrs);
}

Variable max_pool_with_rank(const Variable& x, const PoolOptions& options, int spatial_rank,
                            const std::source_location& location) {
  const Attrs attrs = detail::pool_attrs(options, spatial_rank, /*with_include_pad=*/false,
                                         fmt::format("{}{}d", kBase, spatial_rank));
  return apply_op1(op_def("MaxPool"), {x}, attrs, location);
}
}  // namespace

namespace detail {
Variable max_pool_grad_node(const Variable& x, const Variable& dy, const Attrs& attrs) {
  return apply_op1(op_def("MaxPoolGrad"), {x, dy}, attrs, std::source_location::current());
}
Variable max_pool_grad_grad_node(const Variable& x, const Variable& h, const Attrs& attrs) {
  return apply_op1(op_def("MaxPoolGradGrad"), {x, h}, attrs, std::source_location::current());
}
}  // namespace detail

void register_max_pool(OpRegistry& registry) {
  registry.add({.name = "MaxPool",
                .family = "MaxPool",
                .summary = "2-D/3-D max pooling with strides and pads (pads never win)",
                .num_inputs = 1,
                .infer = infer_max_pool,
                .reference = {"ref", compute_max_pool_reference},
                .fast = {"dnnl", compute_max_pool_dnnl,
                         [](std::span<const Variable> inputs, const Attrs&) {
                           return detail::inputs_are_float32(inputs, {0});
                         }},
                .pullback = pullback_max_pool,
                .cost = max_pool_cost,
                .print = [](const OpDef&, const Attrs& attrs) { return print_with(attrs, ""); }});
  registry.add({.name = "MaxPoolGrad",
                .family = "MaxPoolGrad",
                .summary = "gradient of MaxPool: dy routed to each window's maximum of x",
                .num_inputs = 2,
                .infer = infer_max_pool_grad,
                .reference = {"ref", compute_max_pool_grad_reference},
                .fast = {"dnnl", compute_max_pool_grad_dnnl,
                         [](std::span<const Variable> inputs, const Attrs&) {
                           return detail::inputs_are_float32(inputs, {0, 1});
                         }},
                .pullback = pullback_max_pool_grad,
                .cost = max_pool_cost,
                .print = [](const OpDef&, const Attrs& attrs) { return print_with(attrs, "Grad"); }});
  registry.add({.name = "MaxPoolGradGrad",
                .family = "MaxPoolGradGrad",
                .summary = "gradient of MaxPoolGrad w.r.t. dy: h read at each window's maximum of x",
                .num_inputs = 2,
                .infer = infer_max_pool_grad_grad,
                .reference = {"ref", compute_max_pool_grad_grad_reference},
                .pullback = pullback_max_pool_grad_grad,
                .cost = max_pool_cost,
                .print = [](const OpDef&, const Attrs& attrs) {
                  return print_with(attrs, "GradGrad");
                }});
}

}  // namespace tscope::ops

namespace tscope {

Variable max_pool(const Variable& x, const PoolOptions& options,
                  const std::source_location& location) {
  return ops::max_pool_with_rank(x, options, std::clamp(x.rank() - 2, 1, 3), location);
}

Variable max_pool2d(const Variable& x, const PoolOptions& options,
                    const std::source_location& location) {
  return ops::max_pool_with_rank(x, options, 2, location);
}

Variable max_pool3d(const Variable& x, const PoolOptions& options,
                    const std::source_location& location) {
  return ops::max_pool_with_rank(x, options, 3, location);
}

Variable max_pool_grad(const Variable& x, const Variable& dy, const PoolOptions& options,
                       const std::source_location& location) {
  const int spatial_rank = std::clamp(x.rank() - 2, 1, 3);
  const Attrs attrs = ops::detail::pool_attrs(options, spatial_rank, false,
                                              fmt::format("MaxPool{}dGrad", spatial_rank));
  return apply_op1(op_def("MaxPoolGrad"), {x, dy}, attrs, location);
}

Variable max_pool_grad_grad(const Variable& x, const Variable& h, const PoolOptions& options,
                            const std::source_location& location) {
  const int spatial_rank = std::clamp(x.rank() - 2, 1, 3);
  const Attrs attrs = ops::detail::pool_attrs(options, spatial_rank, false,
                                              fmt::format("MaxPool{}dGradGrad", spatial_rank));
  return apply_op1(op_def("MaxPoolGradGrad"), {x, h}, attrs, location);
}

}  // namespace tscope
