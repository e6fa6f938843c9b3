// SPDX-License-Identifier: Apache-2.0
// ONNX Conv, MaxPool and AveragePool: attributes mapped onto ConvOptions / PoolOptions.
#include <fmt/format.h>

#include "../converter.h"
#include "per_channel.h"
#include "tscope/ops/conv.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/shape.h"

namespace tscope::onnx {
namespace {

using Outputs = std::vector<Variable>;

struct Window {
  std::vector<std::int64_t> kernel;
  std::vector<std::int64_t> strides;
  std::vector<std::int64_t> dilations;
};

/// The `pads` attribute, [begin..., end...] per spatial axis; none means no padding.
Padding pads_attribute(NodeContext& ctx, std::size_t spatial) {
  const std::vector<std::int64_t> pads = ctx.attribute_ints("pads", {});
  if (pads.empty()) return Padding::valid();
  if (pads.size() != 2 * spatial) {
    throw_error(ErrorKind::InvalidArgument, "pads has {} entries; {} spatial axes need {}",
                pads.size(), spatial, 2 * spatial);
  }
  const auto middle = pads.begin() + static_cast<std::ptrdiff_t>(spatial);
  return Padding::explicit_pads({pads.begin(), middle}, {middle, pads.end()});
}

/// The kernel extents: the `kernel_shape` attribute, else the weights' spatial dims.
std::vector<std::int64_t> kernel_of(NodeContext& ctx, const Variable& w) {
  std::vector<std::int64_t> kernel;
  for (int axis = 2; axis < w.rank(); ++axis) kernel.push_back(w.type().dims[axis]);
  return ctx.attribute_ints("kernel_shape", kernel);
}

/// y plus the optional per-output-channel bias input B (input 2).
Variable with_bias(NodeContext& ctx, const Variable& y) {
  return ctx.has_input(2) ? y + per_channel(ctx.input(2), y.rank()) : y;
}

/// The pads of an ONNX node: auto_pad, or `pads` as [begin..., end...].
Padding padding_of(NodeContext& ctx, const Variable& x, const Window& window) {
  const std::string auto_pad = ctx.attribute_string("auto_pad", "NOTSET");
  const auto spatial = window.kernel.size();
  if (auto_pad == "VALID") return Padding::valid();
  if (auto_pad == "SAME_UPPER") return Padding::same();
  if (auto_pad == "SAME_LOWER") {
    // Like SAME_UPPER with an odd total's extra pad at the beginning; needs the input extents.
    std::vector<std::int64_t> begin;
    std::vector<std::int64_t> end;
    for (std::size_t i = 0; i < spatial; ++i) {
      const std::int64_t in = x.type().dims[static_cast<int>(i) + 2];
      if (in == kUnknownDim) ctx.unsupported("auto_pad=SAME_LOWER on an input of unknown extent");
      const std::int64_t stride = window.strides[i];
      const std::int64_t out = (in + stride - 1) / stride;
      const std::int64_t reach = (window.kernel[i] - 1) * window.dilations[i] + 1;
      const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * stride + reach - in);
      begin.push_back(total - total / 2);
      end.push_back(total / 2);
    }
    return Padding::explicit_pads(begin, end);
  }
  if (auto_pad != "NOTSET") ctx.unsupported(fmt::format("auto_pad={}", auto_pad));
  return pads_attribute(ctx, spatial);
}

Window window_of(NodeContext& ctx, std::vector<std::int64_t> kernel) {
  const auto spatial = kernel.size();
  Window window;
  window.kernel = std::move(kernel);
  window.strides = ctx.attribute_ints("strides", std::vector<std::int64_t>(spatial, 1));
  window.dilations = ctx.attribute_ints("dilations", std::vector<std::int64_t>(spatial, 1));
  if (window.strides.size() != spatial || window.dilations.size() != spatial) {
    throw_error(ErrorKind::InvalidArgument, "strides and dilations need {} entries", spatial);
  }
  // Checked here, not only by the ops: the pad arithmetic below divides by strides.
  const auto check_positive = [](const char* name, const std::vector<std::int64_t>& values) {
    for (std::int64_t value : values) {
      if (value < 1 && value != kUnknownDim) {  // a kernel taken from symbolic weights may be '?'
        throw_error(ErrorKind::InvalidArgument, "attribute '{}' ({}) must be positive", name,
                    fmt::join(values, ", "));
      }
    }
  };
  check_positive("kernel_shape", window.kernel);
  check_positive("strides", window.strides);
  check_positive("dilations", window.dilations);
  return window;
}

Outputs convert_conv(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const Variable& w = ctx.input(1);
  const std::vector<std::int64_t> kernel = kernel_of(ctx, w);
  const Window window = window_of(ctx, kernel);
  ConvOptions options;
  options.strides = window.strides;
  options.dilations = window.dilations;
  options.groups = ctx.attribute_int("group", 1);
  options.padding = padding_of(ctx, x, window);
  return {with_bias(ctx, conv(x, w, options))};
}

/// Pads of a ConvTranspose whose output extents are given (output_shape) or implied by SAME
/// auto-padding (input * stride): ONNX's total-padding rule, the odd pad at the end for
/// SAME_UPPER and at the beginning otherwise.
Padding transpose_padding(NodeContext& ctx, const Variable& x, const Window& window,
                          const std::vector<std::int64_t>& output_padding) {
  const std::string auto_pad = ctx.attribute_string("auto_pad", "NOTSET");
  std::vector<std::int64_t> output_shape = ctx.attribute_ints("output_shape", {});
  const std::size_t spatial = window.kernel.size();
  if (output_shape.empty() && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    if (auto_pad == "VALID") return Padding::valid();
    if (auto_pad != "NOTSET") ctx.unsupported(fmt::format("auto_pad={}", auto_pad));
    return pads_attribute(ctx, spatial);
  }
  ctx.ignore_attribute("pads");  // output_shape or auto_pad decide them
  if (output_shape.size() > spatial) {
    output_shape.erase(output_shape.begin(), output_shape.end() - static_cast<std::ptrdiff_t>(spatial));
  }
  std::vector<std::int64_t> begin;
  std::vector<std::int64_t> end;
  for (std::size_t i = 0; i < spatial; ++i) {
    const std::int64_t in = x.type().dims[static_cast<int>(i) + 2];
    if (in == kUnknownDim) ctx.unsupported("ConvTranspose output_shape/auto_pad on an unknown extent");
    const std::int64_t wanted = output_shape.empty() ? in * window.strides[i] : output_shape[i];
    const std::int64_t reach = (window.kernel[i] - 1) * window.dilations[i] + 1;
    const std::int64_t total = window.strides[i] * (in - 1) + output_padding[i] + reach - wanted;
    if (total < 0) ctx.unsupported("an output_shape larger than the transposed convolution reaches");
    const bool upper = auto_pad == "SAME_UPPER";
    begin.push_back(upper ? total / 2 : total - total / 2);
    end.push_back(upper ? total - total / 2 : total / 2);
  }
  return Padding::explicit_pads(begin, end);
}

Outputs convert_conv_transpose(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const Variable& w = ctx.input(1);
  const std::vector<std::int64_t> kernel = kernel_of(ctx, w);
  const Window window = window_of(ctx, kernel);
  ConvTransposeOptions options;
  options.strides = window.strides;
  options.dilations = window.dilations;
  options.groups = ctx.attribute_int("group", 1);
  options.output_padding =
      ctx.attribute_ints("output_padding", std::vector<std::int64_t>(kernel.size(), 0));
  options.padding = transpose_padding(ctx, x, window, options.output_padding);
  return {with_bias(ctx, conv_transpose(x, w, options))};
}

/// Extra end padding that turns floor into ceil output extents (ceil_mode=1); zero when both
/// agree. A window may not start in the end padding (ONNX drops such windows).
std::vector<std::int64_t> ceil_mode_extra(NodeContext& ctx, const Variable& x, const Window& window,
                                          const Padding& padding) {
  std::vector<std::int64_t> extra;
  for (std::size_t i = 0; i < window.kernel.size(); ++i) {
    const std::int64_t in = x.type().dims[static_cast<int>(i) + 2];
    if (in == kUnknownDim) ctx.unsupported("ceil_mode=1 on an input of unknown extent");
    const std::int64_t begin = padding.begin.empty() ? 0 : padding.begin[i];
    const std::int64_t end = padding.end.empty() ? 0 : padding.end[i];
    const std::int64_t reach = (window.kernel[i] - 1) * window.dilations[i] + 1;
    const std::int64_t span = in + begin + end - reach;
    const std::int64_t stride = window.strides[i];
    std::int64_t out = (span + stride - 1) / stride + 1;
    if ((out - 1) * stride >= in + begin) --out;  // the last window would start in the padding
    extra.push_back(std::max<std::int64_t>(0, (out - 1) * stride + reach - (in + begin + end)));
  }
  return extra;
}

template <bool kMax>
Outputs convert_pool(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  if (!is_floating(x.dtype())) ctx.unsupported(fmt::format("pooling of {}", dtype_name(x.dtype())));
  const std::vector<std::int64_t> kernel = ctx.attribute_ints("kernel_shape", {});
  if (kernel.empty()) throw_error(ErrorKind::InvalidArgument, "attribute 'kernel_shape' is required");
  const Window window = window_of(ctx, kernel);
  for (std::int64_t dilation : window.dilations) {
    if (dilation != 1) ctx.unsupported("pooling with dilations");
  }
  if (kMax && ctx.attribute_int("storage_order", 0) != 0) ctx.unsupported("storage_order=1");
  if (ctx.num_outputs() > 1) ctx.unsupported("MaxPool's Indices output");
  PoolOptions options;
  options.kernel = window.kernel;
  options.strides = window.strides;
  options.padding = padding_of(ctx, x, window);
  if (!kMax) options.include_pad = ctx.attribute_int("count_include_pad", 0) != 0;
  if (ctx.attribute_int("ceil_mode", 0) != 0) {
    const std::vector<std::int64_t> extra = ceil_mode_extra(ctx, x, window, options.padding);
    bool any = false;
    for (std::int64_t pad : extra) any = any || pad != 0;
    if (any) {
      // Padded positions never win a max; an average would count them, which ONNX does not.
      if (!kMax) ctx.unsupported("AveragePool with ceil_mode=1 that changes the output extent");
      if (options.padding.mode != Padding::Mode::Explicit) ctx.unsupported("ceil_mode=1 with auto_pad");
      if (options.padding.begin.empty()) {
        options.padding.begin.assign(kernel.size(), 0);
        options.padding.end.assign(kernel.size(), 0);
      }
      for (std::size_t i = 0; i < extra.size(); ++i) options.padding.end[i] += extra[i];
    }
  }
  return {kMax ? max_pool(x, options) : avg_pool(x, options)};
}

}  // namespace

void register_conv_converters(ConverterTable& table) {
  table.add("AveragePool", 1, convert_pool<false>);
  table.add("Conv", 1, convert_conv);
  table.add("ConvTranspose", 1, convert_conv_transpose);
  table.add("MaxPool", 1, convert_pool<true>);
}

}  // namespace tscope::onnx
