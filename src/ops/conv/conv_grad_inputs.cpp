// SPDX-License-Identifier: Apache-2.0
// ConvGradI: the gradient of Conv with respect to its input x, from w, dy and x's shape (Theano's
// AbstractConv_gradInputs; oneDNN's backward-data convolution). The shape is an input because a
// strided convolution's output does not determine x's extent. The op is linear in w and in dy,
// so its own pullback is a Conv and a ConvGradW.
#include <fmt/format.h>

#include <algorithm>

#include "conv_backward_data.h"
#include "conv_dnnl.h"
#include "conv_geometry.h"
#include "conv_nodes.h"
#include "reference_loops.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/conv.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
std::string grad_inputs_label(const Attrs& attrs) { return detail::conv_label(attrs) + "GradI"; }

int full_rank(const Attrs& attrs) { return static_cast<int>(attrs.get_ints("strides").size()) + 2; }

std::vector<Type> infer_conv_grad_inputs(const InferContext& ctx) {
  const std::string label = grad_inputs_label(ctx.attrs);
  detail::check_conv_float_inputs(ctx, {0, 1}, label);
  const Dims x = detail::static_shape_input(ctx.inputs[2], full_rank(ctx.attrs), label);
  const Dims& dy = ctx.input_type(1).dims;
  const detail::ConvGeometry geometry =
      detail::conv_geometry(ctx.attrs, x, ctx.input_type(0).dims, label);
  detail::check_conv_output_grad(geometry, dy, label);
  Dims dims = geometry.input_shape();
  if (dims[0] == kUnknownDim) dims[0] = dy[0];
  return {Type{ctx.input_type(0).dtype, dims}};
}

detail::ConvGeometry kernel_geometry(const KernelContext& ctx) {
  const std::string label = grad_inputs_label(*ctx.attrs);
  const Dims x = detail::shape_from_tensor(ctx.input(2), full_rank(*ctx.attrs), label);
  const detail::ConvGeometry geometry =
      detail::conv_geometry(*ctx.attrs, x, ctx.input(0).shape(), label);
  detail::check_conv_output_grad(geometry, ctx.input(1).shape(), label);
  return geometry;
}

void compute_conv_grad_inputs_reference(KernelContext& ctx) {
  detail::conv_backward_data_reference(ctx, kernel_geometry(ctx), ctx.input(0), ctx.input(1));
}

void compute_conv_grad_inputs_dnnl(KernelContext& ctx) {
  detail::conv_backward_data_dnnl(ctx, kernel_geometry(ctx), ctx.input(0), ctx.input(1));
}

bool conv_grad_inputs_dnnl_accepts(std::span<const Variable> inputs, const Attrs&) {
  return detail::inputs_are_float32(inputs, {0, 1});
}

// <h, ConvGradI(w, dy)> = <Conv(h, w), dy>: the derivative in dy is Conv(h, w), in w ConvGradW.
std::vector<Variable> pullback_conv_grad_inputs(const PullbackContext& ctx) {
  const Variable& h = ctx.output_grads[0];
  const Variable& w = ctx.inputs[0];
  const Variable& dy = ctx.inputs[1];
  return {detail::conv_grad_weights_node(h, dy, detail::shape_variable(w), ctx.attrs),
          detail::conv_node(h, w, ctx.attrs), Variable()};
}

Cost conv_grad_inputs_cost(const CostContext& ctx) {
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  const double elements = static_cast<double>(ctx.input_shapes[0].product() +
                                              ctx.input_shapes[1].product() +
                                              ctx.output_shapes[0].product());
  return Cost{detail::conv_flops(ctx.input_shapes[1], ctx.input_shapes[0]), elements * item};
}
}  // namespace

namespace detail {
void conv_backward_data_reference(KernelContext& ctx, const ConvGeometry& geometry,
                                  const Tensor& w, const Tensor& dy) {
  const std::vector<double> w_values = w.to_doubles();
  const std::vector<double> dy_values = dy.to_doubles();
  Tensor& dx = ctx.allocate_output(0, w.dtype(), geometry.input_shape());
  std::vector<double> total(static_cast<std::size_t>(dx.numel()), 0.0);
  for_each_conv_tap(geometry, [&](std::int64_t xi, std::int64_t wi, std::int64_t yi) {
    total[static_cast<std::size_t>(xi)] +=
        dy_values[static_cast<std::size_t>(yi)] * w_values[static_cast<std::size_t>(wi)];
  });
  store_doubles(dx, total);
}

void conv_backward_data_dnnl(KernelContext& ctx, const ConvGeometry& geometry, const Tensor& w,
                             const Tensor& dy) {
  const Tensor w_dense = w.contiguous();
  const Tensor dy_dense = dy.contiguous();
  Tensor& dx = ctx.allocate_output(0, w.dtype(), geometry.input_shape());
  const bool empty = dx.numel() == 0 || w.numel() == 0 || dy.numel() == 0;
  if (empty || !run_conv_dnnl(ctx, ConvDirection::BackwardData, geometry, dx, w_dense, dy_dense)) {
    conv_backward_data_reference(ctx, geometry, w, dy);
  }
}

Variable conv_grad_inputs_node(const Variable& w, const Variable& dy, const Variable& input_shape,
                               const Attrs& attrs) {
  return apply_op1(op_def("ConvGradI"), {w, dy, input_shape}, attrs,
                   std::source_location::current());
}
}  // namespace detail

void register_conv_grad_inputs(OpRegistry& registry) {
  registry.add({.name = "ConvGradI",
                .family = "ConvGradI",
                .summary = "gradient of Conv w.r.t. its input, from (w, dy, input shape)",
                .num_inputs = 3,
                .infer = infer_conv_grad_inputs,
                .reference = {"ref", compute_conv_grad_inputs_reference},
                .fast = {"dnnl", compute_conv_grad_inputs_dnnl, conv_grad_inputs_dnnl_accepts},
                .pullback = pullback_conv_grad_inputs,
                .cost = conv_grad_inputs_cost,
                .print = [](const OpDef&, const Attrs& attrs) {
                  return detail::conv_printed_name("GradI", attrs);
                }});
}

}  // namespace tscope::ops

namespace tscope {

Variable conv_grad_inputs(const Variable& w, const Variable& dy, const Variable& input_shape,
                          const ConvOptions& options, const std::source_location& location) {
  const int spatial_rank = std::clamp(w.rank() - 2, 1, 3);
  const Attrs attrs =
      ops::detail::conv_attrs(options, spatial_rank, fmt::format("Conv{}dGradI", spatial_rank));
  return apply_op1(op_def("ConvGradI"), {w, dy, input_shape}, attrs, location);
}

}  // namespace tscope
