// SPDX-License-Identifier: Apache-2.0
// Conv: N-d cross-correlation of x (N, C, spatial...) with w (O, C / groups, kernel...), with
// strides, explicit / 'same' / 'full' padding, dilation and groups. Its pullback builds ConvGradI
// and ConvGradW, so a profile shows the forward pass and both gradients as separate rows.
#include <fmt/format.h>

#include <algorithm>

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
std::vector<Type> infer_conv(const InferContext& ctx) {
  const std::string label = detail::conv_label(ctx.attrs);
  detail::check_conv_float_inputs(ctx, {0, 1}, label);
  const detail::ConvGeometry geometry = detail::conv_geometry(
      ctx.attrs, ctx.input_type(0).dims, ctx.input_type(1).dims, label);
  return {Type{ctx.input_type(0).dtype, geometry.output_shape()}};
}

detail::ConvGeometry kernel_geometry(const KernelContext& ctx) {
  return detail::conv_geometry(*ctx.attrs, ctx.input(0).shape(), ctx.input(1).shape(),
                               detail::conv_label(*ctx.attrs));
}

void compute_conv_reference(KernelContext& ctx) {
  const detail::ConvGeometry geometry = kernel_geometry(ctx);
  const std::vector<double> x = ctx.input(0).to_doubles();
  const std::vector<double> w = ctx.input(1).to_doubles();
  Tensor& y = ctx.allocate_output(0, ctx.input(0).dtype(), geometry.output_shape());
  std::vector<double> total(static_cast<std::size_t>(y.numel()), 0.0);
  detail::for_each_conv_tap(geometry, [&](std::int64_t xi, std::int64_t wi, std::int64_t yi) {
    total[static_cast<std::size_t>(yi)] +=
        x[static_cast<std::size_t>(xi)] * w[static_cast<std::size_t>(wi)];
  });
  detail::store_doubles(y, total);
}

void compute_conv_dnnl(KernelContext& ctx) {
  const detail::ConvGeometry geometry = kernel_geometry(ctx);
  const Tensor x = ctx.input(0).contiguous();
  const Tensor w = ctx.input(1).contiguous();
  Tensor& y = ctx.allocate_output(0, x.dtype(), geometry.output_shape());
  // Empty tensors (a batch or channel count of 0) are left to the reference loops.
  const bool empty = x.numel() == 0 || w.numel() == 0 || y.numel() == 0;
  if (empty || !detail::run_conv_dnnl(ctx, detail::ConvDirection::Forward, geometry, x, w, y)) {
    compute_conv_reference(ctx);
  }
}

bool conv_dnnl_accepts(std::span<const Variable> inputs, const Attrs&) {
  return detail::inputs_are_float32(inputs, {0, 1});
}

std::vector<Variable> pullback_conv(const PullbackContext& ctx) {
  const Variable& dy = ctx.output_grads[0];
  const Variable& x = ctx.inputs[0];
  const Variable& w = ctx.inputs[1];
  return {detail::conv_grad_inputs_node(w, dy, detail::shape_variable(x), ctx.attrs),
          detail::conv_grad_weights_node(x, dy, detail::shape_variable(w), ctx.attrs)};
}

Cost conv_cost(const CostContext& ctx) {
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  const double elements = static_cast<double>(ctx.input_shapes[0].product() +
                                              ctx.input_shapes[1].product() +
                                              ctx.output_shapes[0].product());
  return Cost{detail::conv_flops(ctx.output_shapes[0], ctx.input_shapes[1]), elements * item};
}

int conv_spatial_rank(const Variable& x) { return std::clamp(x.rank() - 2, 1, 3); }

Variable conv_with_rank(const Variable& x, const Variable& w, const ConvOptions& options,
                        int spatial_rank, const std::source_location& location) {
  const std::string label = fmt::format("Conv{}d", spatial_rank);
  return apply_op1(op_def("Conv"), {x, w}, detail::conv_attrs(options, spatial_rank, label),
                   location);
}
}  // namespace

namespace detail {
Variable conv_node(const Variable& x, const Variable& w, const Attrs& attrs) {
  return apply_op1(op_def("Conv"), {x, w}, attrs, std::source_location::current());
}

Attrs conv_attrs(const ConvOptions& options, int spatial_rank, std::string_view label) {
  Attrs attrs;
  store_window_attrs(attrs, spatial_rank, options.strides, options.padding, label);
  attrs.set("dilations", spatial_list(options.dilations, spatial_rank, 1, "dilations", label));
  attrs.set("groups", options.groups);
  return attrs;
}

std::string conv_printed_name(std::string_view suffix, const Attrs& attrs) {
  return fmt::format("{}{}{{{},dilation=({}),groups={}}}", conv_label(attrs), suffix,
                     window_attrs_string(attrs), fmt::join(attrs.get_ints("dilations"), ","),
                     attrs.get_int("groups"));
}
}  // namespace detail

void register_conv(OpRegistry& registry) {
  registry.add({.name = "Conv",
                .family = "Conv",
                .summary = "2-D/3-D convolution (NCHW/NCDHW x OIHW/OIDHW): strides, pads, dilation, groups",
                .num_inputs = 2,
                .infer = infer_conv,
                .reference = {"ref", compute_conv_reference},
                .fast = {"dnnl", compute_conv_dnnl, conv_dnnl_accepts},
                .pullback = pullback_conv,
                .cost = conv_cost,
                .print = [](const OpDef&, const Attrs& attrs) {
                  return detail::conv_printed_name("", attrs);
                }});
}

}  // namespace tscope::ops

namespace tscope {

Variable conv(const Variable& x, const Variable& w, const ConvOptions& options,
              const std::source_location& location) {
  return ops::conv_with_rank(x, w, options, ops::conv_spatial_rank(x), location);
}

Variable conv2d(const Variable& x, const Variable& w, const ConvOptions& options,
                const std::source_location& location) {
  return ops::conv_with_rank(x, w, options, 2, location);
}

Variable conv3d(const Variable& x, const Variable& w, const ConvOptions& options,
                const std::source_location& location) {
  return ops::conv_with_rank(x, w, options, 3, location);
}

}  // namespace tscope
