// SPDX-License-Identifier: Apache-2.0
// ConvTranspose: the transposed convolution (ONNX ConvTranspose). It computes what ConvGradI
// computes for the convolution it transposes, with x in dy's place and the output extent taken
// from the attrs (output_padding) instead of a shape input; a separate op so the profile and
// graphs name it. Its pullback is that of ConvGradI: a Conv for x and a ConvGradW for w.
#include <fmt/format.h>

#include <algorithm>

#include "conv_backward_data.h"
#include "conv_geometry.h"
#include "conv_nodes.h"
#include "dnnl_accepts.h"
#include "tscope/core/checked_math.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/graph/type.h"
#include "tscope/ops/conv.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
std::string transpose_label(const Attrs& attrs) {
  return fmt::format("ConvTranspose{}d", attrs.get_ints("strides").size());
}

// The transposed convolution's output shape: the input shape of the convolution it transposes.
Dims transpose_output_shape(const Attrs& attrs, const Dims& x, const Dims& w,
                            std::string_view label) {
  const detail::WindowAttrs window = detail::read_window_attrs(attrs, label);
  const int rank = window.spatial_rank;
  if (window.mode != Padding::Mode::Explicit) {
    throw_error(ErrorKind::InvalidArgument, "{}: padding must be explicit (or valid)", label);
  }
  if (x.rank() != rank + 2 || w.rank() != rank + 2) {
    throw_error(ErrorKind::TypeMismatch,
                "{}: x {} and w {} must both have rank {} (N, C, {} spatial axes)", label,
                x.to_string(), w.to_string(), rank + 2, rank);
  }
  const std::vector<std::int64_t>& output_padding = attrs.get_ints("output_padding");
  if (static_cast<int>(output_padding.size()) != rank) {
    throw_error(ErrorKind::InvalidArgument, "{}: output_padding has {} entries for {} spatial axes",
                label, output_padding.size(), rank);
  }
  const std::int64_t groups = attrs.get_int("groups");
  if (x[1] != kUnknownDim && w[0] != kUnknownDim && x[1] != w[0]) {
    throw_error(ErrorKind::ShapeMismatch, "{}: x {} has {} channels but w {} expects {}", label,
                x.to_string(), x[1], w.to_string(), w[0]);
  }
  Dims out{x[0], w[1] == kUnknownDim ? kUnknownDim : checked_mul(w[1], groups, label)};
  for (std::size_t axis = 0; axis < static_cast<std::size_t>(rank); ++axis) {
    const std::int64_t extra = output_padding[axis];
    if (extra < 0 || extra >= window.stride[axis]) {
      throw_error(ErrorKind::InvalidArgument,
                  "{}: output_padding ({}) must be >= 0 and smaller than the strides ({})", label,
                  fmt::join(output_padding, ", "), fmt::join(attrs.get_ints("strides"), ", "));
    }
    const std::int64_t in = x[static_cast<int>(axis) + 2];
    const std::int64_t k = w[static_cast<int>(axis) + 2];
    if (in == kUnknownDim || k == kUnknownDim) {
      out.push_back(kUnknownDim);
      continue;
    }
    // Checked: strides, dilations and pads are model attributes. Both sums are non-negative, so
    // their difference cannot wrap.
    const std::int64_t grown = checked_add(
        checked_add(checked_mul(in - 1, window.stride[axis], label),
                    checked_mul(k - 1, window.dilation[axis], label), label),
        1 + extra, label);
    const std::int64_t extent =
        grown - checked_add(window.pad_begin[axis], window.pad_end[axis], label);
    if (in < 1 || extent < 1) {
      throw_error(ErrorKind::ShapeMismatch,
                  "{}: x {} and w {}: spatial axis {} would have extent {} after the pads", label,
                  x.to_string(), w.to_string(), axis, extent);
    }
    out.push_back(extent);
  }
  return out;
}

std::vector<Type> infer_conv_transpose(const InferContext& ctx) {
  const std::string label = transpose_label(ctx.attrs);
  detail::check_conv_float_inputs(ctx, {0, 1}, label);
  const Dims& x = ctx.input_type(0).dims;
  const Dims& w = ctx.input_type(1).dims;
  const Dims out = transpose_output_shape(ctx.attrs, x, w, label);
  // The transposed convolution must map `out` back onto x's extents.
  const detail::ConvGeometry geometry = detail::conv_geometry(ctx.attrs, out, w, label);
  detail::check_conv_output_grad(geometry, x, label);
  return {Type{ctx.input_type(0).dtype, out}};
}

detail::ConvGeometry kernel_geometry(const KernelContext& ctx) {
  const std::string label = transpose_label(*ctx.attrs);
  const Dims& x = ctx.input(0).shape();
  const Dims& w = ctx.input(1).shape();
  const detail::ConvGeometry geometry =
      detail::conv_geometry(*ctx.attrs, transpose_output_shape(*ctx.attrs, x, w, label), w, label);
  detail::check_conv_output_grad(geometry, x, label);
  return geometry;
}

void compute_conv_transpose_reference(KernelContext& ctx) {
  detail::conv_backward_data_reference(ctx, kernel_geometry(ctx), ctx.input(1), ctx.input(0));
}

void compute_conv_transpose_dnnl(KernelContext& ctx) {
  detail::conv_backward_data_dnnl(ctx, kernel_geometry(ctx), ctx.input(1), ctx.input(0));
}

// The convolution's attrs: the same without output_padding (so the nodes merge with ordinary
// convolutions).
Attrs forward_attrs(const Attrs& attrs) {
  Attrs forward;
  for (const auto& [name, value] : attrs.values()) {
    if (name != "output_padding") forward.set(name, value);
  }
  return forward;
}

std::vector<Variable> pullback_conv_transpose(const PullbackContext& ctx) {
  const Variable& h = ctx.output_grads[0];
  const Variable& x = ctx.inputs[0];
  const Variable& w = ctx.inputs[1];
  const Attrs attrs = forward_attrs(ctx.attrs);
  return {detail::conv_node(h, w, attrs),
          detail::conv_grad_weights_node(h, x, detail::shape_variable(w), attrs)};
}

Cost conv_transpose_cost(const CostContext& ctx) {
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  const double elements = static_cast<double>(ctx.input_shapes[0].product() +
                                              ctx.input_shapes[1].product() +
                                              ctx.output_shapes[0].product());
  return Cost{detail::conv_flops(ctx.input_shapes[0], ctx.input_shapes[1]), elements * item};
}

std::string print_conv_transpose(const OpDef&, const Attrs& attrs) {
  return fmt::format("{}{{{},dilation=({}),groups={},output_padding=({})}}",
                     transpose_label(attrs), detail::window_attrs_string(attrs),
                     fmt::join(attrs.get_ints("dilations"), ","), attrs.get_int("groups"),
                     fmt::join(attrs.get_ints("output_padding"), ","));
}

Variable conv_transpose_with_rank(const Variable& x, const Variable& w,
                                  const ConvTransposeOptions& options, int spatial_rank,
                                  const std::source_location& location) {
  const std::string label = fmt::format("ConvTranspose{}d", spatial_rank);
  Attrs attrs = detail::conv_attrs(
      ConvOptions{options.strides, options.padding, options.dilations, options.groups},
      spatial_rank, label);
  attrs.set("output_padding",
            detail::spatial_list(options.output_padding, spatial_rank, 0, "output_padding", label));
  return apply_op1(op_def("ConvTranspose"), {x, w}, attrs, location);
}
}  // namespace

void register_conv_transpose(OpRegistry& registry) {
  registry.add({.name = "ConvTranspose",
                .family = "ConvTranspose",
                .summary = "transposed convolution (ConvGradI under its own name), output_padding",
                .num_inputs = 2,
                .infer = infer_conv_transpose,
                .reference = {"ref", compute_conv_transpose_reference},
                .fast = {"dnnl", compute_conv_transpose_dnnl,
                         [](std::span<const Variable> inputs, const Attrs&) {
                           return detail::inputs_are_float32(inputs, {0, 1});
                         }},
                .pullback = pullback_conv_transpose,
                .cost = conv_transpose_cost,
                .print = print_conv_transpose});
}

}  // namespace tscope::ops

namespace tscope {

Variable conv_transpose(const Variable& x, const Variable& w, const ConvTransposeOptions& options,
                        const std::source_location& location) {
  return ops::conv_transpose_with_rank(x, w, options, std::clamp(x.rank() - 2, 1, 3), location);
}

Variable conv_transpose2d(const Variable& x, const Variable& w, const ConvTransposeOptions& options,
                          const std::source_location& location) {
  return ops::conv_transpose_with_rank(x, w, options, 2, location);
}

Variable conv_transpose3d(const Variable& x, const Variable& w, const ConvTransposeOptions& options,
                          const std::source_location& location) {
  return ops::conv_transpose_with_rank(x, w, options, 3, location);
}

}  // namespace tscope
