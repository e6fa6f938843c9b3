// SPDX-License-Identifier: Apache-2.0
// ConvGradW: the gradient of Conv with respect to its weights w, from x, dy and w's shape
// (Theano's AbstractConv_gradWeights; oneDNN's backward-weights convolution). The shape is an
// input because, with strides, x and dy do not determine the kernel's extent. The op is linear in
// x and in dy, so its own pullback is a ConvGradI and a Conv.
#include <fmt/format.h>

#include <algorithm>

#include "conv_dnnl.h"
#include "conv_geometry.h"
#include "conv_nodes.h"
#include "depthwise_grad_weights.h"
#include "reference_loops.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/conv.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
std::string grad_weights_label(const Attrs& attrs) { return detail::conv_label(attrs) + "GradW"; }

int full_rank(const Attrs& attrs) { return static_cast<int>(attrs.get_ints("strides").size()) + 2; }

std::vector<Type> infer_conv_grad_weights(const InferContext& ctx) {
  const std::string label = grad_weights_label(ctx.attrs);
  detail::check_conv_float_inputs(ctx, {0, 1}, label);
  const Dims w = detail::static_shape_input(ctx.inputs[2], full_rank(ctx.attrs), label);
  const Dims& dy = ctx.input_type(1).dims;
  const detail::ConvGeometry geometry =
      detail::conv_geometry(ctx.attrs, ctx.input_type(0).dims, w, label);
  detail::check_conv_output_grad(geometry, dy, label);
  Dims dims = geometry.weight_shape();
  if (dims[0] == kUnknownDim) dims[0] = dy[1];
  if (dims[1] == kUnknownDim) dims[1] = w[1];
  return {Type{ctx.input_type(0).dtype, dims}};
}

detail::ConvGeometry kernel_geometry(const KernelContext& ctx) {
  const std::string label = grad_weights_label(*ctx.attrs);
  const Dims w = detail::shape_from_tensor(ctx.input(2), full_rank(*ctx.attrs), label);
  const detail::ConvGeometry geometry =
      detail::conv_geometry(*ctx.attrs, ctx.input(0).shape(), w, label);
  detail::check_conv_output_grad(geometry, ctx.input(1).shape(), label);
  return geometry;
}

void compute_conv_grad_weights_reference(KernelContext& ctx) {
  const detail::ConvGeometry geometry = kernel_geometry(ctx);
  const std::vector<double> x = ctx.input(0).to_doubles();
  const std::vector<double> dy = ctx.input(1).to_doubles();
  Tensor& dw = ctx.allocate_output(0, ctx.input(0).dtype(), geometry.weight_shape());
  std::vector<double> total(static_cast<std::size_t>(dw.numel()), 0.0);
  detail::for_each_conv_tap(geometry, [&](std::int64_t xi, std::int64_t wi, std::int64_t yi) {
    total[static_cast<std::size_t>(wi)] +=
        x[static_cast<std::size_t>(xi)] * dy[static_cast<std::size_t>(yi)];
  });
  detail::store_doubles(dw, total);
}

void compute_conv_grad_weights_dnnl(KernelContext& ctx) {
  const detail::ConvGeometry geometry = kernel_geometry(ctx);
  const Tensor x = ctx.input(0).contiguous();
  const Tensor dy = ctx.input(1).contiguous();
  Tensor& dw = ctx.allocate_output(0, x.dtype(), geometry.weight_shape());
  const bool empty = dw.numel() == 0 || x.numel() == 0 || dy.numel() == 0;
  if (!empty && detail::uses_depthwise_grad_weights_2d(geometry.in_channels, geometry.groups,
                                                        geometry.weight_shape())) {
    detail::depthwise_grad_weights_2d(geometry, static_cast<const float*>(x.raw_data()),
                                      static_cast<const float*>(dy.raw_data()),
                                      static_cast<float*>(dw.raw_data()));
    return;
  }
  if (empty ||
      !detail::run_conv_dnnl(ctx, detail::ConvDirection::BackwardWeights, geometry, x, dw, dy)) {
    compute_conv_grad_weights_reference(ctx);
  }
}

bool conv_grad_weights_dnnl_accepts(std::span<const Variable> inputs, const Attrs&) {
  return detail::inputs_are_float32(inputs, {0, 1});
}

// "cpu" for the depthwise weight gradients that run this project's loops
// (depthwise_grad_weights.h), when the types tell; "dnnl" for the rest.
std::string_view conv_grad_weights_label(std::span<const Variable> inputs, const Attrs& attrs) {
  const Variable& shape = inputs[2];
  const Dims& x = inputs[0].type().dims;
  if (shape.kind() != VariableKind::Constant || x.rank() != 4) return "dnnl";
  Dims w;
  for (const double extent : shape.constant_value().to_doubles()) {
    w.push_back(static_cast<std::int64_t>(extent));
  }
  return detail::uses_depthwise_grad_weights_2d(x[1], attrs.get_int("groups"), w) ? "cpu" : "dnnl";
}

// <k, ConvGradW(x, dy)> = <Conv(x, k), dy>: the derivative in dy is Conv(x, k), in x ConvGradI.
std::vector<Variable> pullback_conv_grad_weights(const PullbackContext& ctx) {
  const Variable& k = ctx.output_grads[0];
  const Variable& x = ctx.inputs[0];
  const Variable& dy = ctx.inputs[1];
  return {detail::conv_grad_inputs_node(k, dy, detail::shape_variable(x), ctx.attrs),
          detail::conv_node(x, k, ctx.attrs), Variable()};
}

Cost conv_grad_weights_cost(const CostContext& ctx) {
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  const double elements = static_cast<double>(ctx.input_shapes[0].product() +
                                              ctx.input_shapes[1].product() +
                                              ctx.output_shapes[0].product());
  return Cost{detail::conv_flops(ctx.input_shapes[1], ctx.output_shapes[0]), elements * item};
}
}  // namespace

namespace detail {
Variable conv_grad_weights_node(const Variable& x, const Variable& dy, const Variable& weight_shape,
                                const Attrs& attrs) {
  return apply_op1(op_def("ConvGradW"), {x, dy, weight_shape}, attrs,
                   std::source_location::current());
}
}  // namespace detail

void register_conv_grad_weights(OpRegistry& registry) {
  registry.add({.name = "ConvGradW",
                .family = "ConvGradW",
                .summary = "gradient of Conv w.r.t. its weights, from (x, dy, weight shape)",
                .num_inputs = 3,
                .infer = infer_conv_grad_weights,
                .reference = {"ref", compute_conv_grad_weights_reference},
                .fast = {"dnnl", compute_conv_grad_weights_dnnl, conv_grad_weights_dnnl_accepts,
                         conv_grad_weights_label},
                .pullback = pullback_conv_grad_weights,
                .cost = conv_grad_weights_cost,
                .print = [](const OpDef&, const Attrs& attrs) {
                  return detail::conv_printed_name("GradW", attrs);
                }});
}

}  // namespace tscope::ops

namespace tscope {

Variable conv_grad_weights(const Variable& x, const Variable& dy, const Variable& weight_shape,
                           const ConvOptions& options, const std::source_location& location) {
  const int spatial_rank = std::clamp(x.rank() - 2, 1, 3);
  const Attrs attrs =
      ops::detail::conv_attrs(options, spatial_rank, fmt::format("Conv{}dGradW", spatial_rank));
  return apply_op1(op_def("ConvGradW"), {x, dy, weight_shape}, attrs, location);
}

}  // namespace tscope
