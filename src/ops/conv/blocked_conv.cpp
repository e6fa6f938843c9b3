// SPDX-License-Identifier: Apache-2.0
// BlockedConv: Conv on the channel-blocked layout (channel_blocks.h) with packed weights, an
// optional bias, an optional residual and a clamp, y = clamp(conv(x, w) + bias + residual, lower,
// upper), all in one oneDNN primitive. Created by the rewrite rule use_channel_blocks from a Conv,
// its bias add, a skip connection's add and the ReLU / clip after them; it keeps the Conv's attrs
// and adds layout, block, in_blocked, channels, out_channels, has_bias, has_residual, lower and
// upper. Inputs: x, packed w, then bias and residual when present. Inference only: no gradient.
// With layout "oihw" (block 0) everything is plain: a convolution whose channels fit no block
// still gets its epilogue fused.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "blocked_conv_dnnl.h"
#include "channel_blocks.h"
#include "conv_geometry.h"
#include "conv_nodes.h"
#include "dnnl_util.h"
#include "reference_loops.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
constexpr std::string_view kLabel = "BlockedConv";

// The attrs a kernel needs, read and checked once: at type inference, and on a node's first
// call (kept in its KernelState), so that no call parses the layout name.
struct Signature {
  detail::WeightLayout layout;
  bool in_blocked;
  detail::ConvEpilogue epilogue;
  bool winograd;
  std::int64_t groups;
  std::int64_t channels;
  std::int64_t out_channels;
};

Signature signature_of(const Attrs& attrs) {
  Signature s{detail::weight_layout_from(attrs.get_string("layout"), kLabel),
              attrs.get_bool("in_blocked"),
              {attrs.get_bool("has_bias"), attrs.get_bool_or("has_residual", false),
               attrs.get_double("lower"), attrs.get_double("upper")},
              attrs.get_bool_or("winograd", false),
              attrs.get_int("groups"),
              attrs.get_int("channels"),
              attrs.get_int("out_channels")};
  if (s.in_blocked != detail::reads_blocked_input(s.layout)) {
    throw_error(ErrorKind::InvalidArgument, "{}: in_blocked={} does not match weight layout {}",
                kLabel, s.in_blocked, attrs.get_string("layout"));
  }
  const bool plain = s.layout.kind == detail::WeightKind::Plain;
  const std::int64_t block = plain ? attrs.get_int("block") : detail::check_block_attr(attrs, kLabel);
  if (block != s.layout.block) {
    throw_error(ErrorKind::InvalidArgument, "{}: block {} does not match weight layout {}",
                kLabel, attrs.get_int("block"), attrs.get_string("layout"));
  }
  return s;
}

// What a BlockedConv node keeps between calls: its signature, its oneDNN primitive, and the
// geometry of the last call's input shapes, which later calls of the same shapes reuse (resolving
// it reads a dozen attrs by name, a cost that shows on convolutions of a few microseconds).
struct BlockedConvNodeState final : KernelState {
  Signature signature;
  std::shared_ptr<KernelState> primitive;
  std::optional<detail::ConvGeometry> geometry;
  Dims geometry_x;
  Dims geometry_w;
};

BlockedConvNodeState& node_state(KernelContext& ctx) {
  if (auto* state = dynamic_cast<BlockedConvNodeState*>(ctx.state.get())) return *state;
  auto fresh = std::make_shared<BlockedConvNodeState>();
  fresh->signature = signature_of(*ctx.attrs);
  BlockedConvNodeState& state = *fresh;
  ctx.state = std::move(fresh);
  return state;
}

// The output's shape: blocked in the layout's block, plain for "oihw".
Dims blocked_output(const Signature& s, const detail::ConvGeometry& g) {
  if (s.layout.block == 0) return g.output_shape();
  return detail::blocked_shape(g.output_shape(), s.layout.block, kLabel);
}

// The plain (N, C, H, W) shape of x and OIHW shape of w the node stands for.
Dims plain_input_shape(const Signature& s, const Dims& x) {
  if (!s.in_blocked) return x;
  detail::check_blocked_dims(x, s.layout.block, kLabel);
  return detail::plain_shape(x);
}

Dims plain_weight_shape(const Signature& s, const Dims& packed) {
  const Dims plain = detail::unpacked_weight_shape(s.layout, packed, s.channels);
  const Dims expected = detail::packed_weight_shape(s.layout, plain, s.groups, kLabel);
  if (packed.rank() != expected.rank() || !(expected == packed) || plain[0] != s.out_channels ||
      plain[1] * s.groups != s.channels) {
    throw_error(ErrorKind::ShapeMismatch,
                "{}: packed weights {} do not hold {} weights for {} -> {} channels (groups {})",
                kLabel, packed.to_string(), detail::weight_layout_name(s.layout), s.channels,
                s.out_channels, s.groups);
  }
  return plain;
}

detail::ConvGeometry geometry_of(const Attrs& attrs, const Signature& s, const Dims& x,
                                 const Dims& w) {
  return detail::conv_geometry(attrs, plain_input_shape(s, x), plain_weight_shape(s, w), kLabel);
}

// geometry_of for a call, reused from the node's state while the input shapes stay the same.
const detail::ConvGeometry& call_geometry(const KernelContext& ctx, BlockedConvNodeState& state) {
  const Dims& x = ctx.input(0).shape();
  const Dims& w = ctx.input(1).shape();
  if (!state.geometry || !(state.geometry_x == x) || !(state.geometry_w == w)) {
    state.geometry = geometry_of(*ctx.attrs, state.signature, x, w);
    state.geometry_x = x;
    state.geometry_w = w;
  }
  return *state.geometry;
}

std::vector<Type> infer_blocked_conv(const InferContext& ctx) {
  const Signature s = signature_of(ctx.attrs);
  const int expected_inputs = 2 + (s.epilogue.has_bias ? 1 : 0) + (s.epilogue.has_residual ? 1 : 0);
  if (ctx.num_inputs() != expected_inputs) {
    throw_error(ErrorKind::InvalidArgument, "{}: has_bias={} and has_residual={} need {} inputs, got {}",
                kLabel, s.epilogue.has_bias, s.epilogue.has_residual, expected_inputs,
                ctx.num_inputs());
  }
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.input_type(i).dtype != DType::Float32) {
      throw_error(ErrorKind::TypeMismatch, "{}: input {} is {}, expects float32", kLabel, i,
                  dtype_name(ctx.input_type(i).dtype));
    }
  }
  if (ctx.input_type(1).rank() < 4) {
    throw_error(ErrorKind::TypeMismatch, "{}: packed weights of rank {}", kLabel,
                ctx.input_type(1).rank());
  }
  const detail::ConvGeometry g =
      geometry_of(ctx.attrs, s, ctx.input_type(0).dims, ctx.input_type(1).dims);
  if (s.winograd && !suits_winograd(ctx.attrs, g.window.kernel[0], g.window.kernel[1])) {
    throw_error(ErrorKind::InvalidArgument,
                "{}: winograd needs layout OIhw16i16o, groups 1, a 3x3 kernel and strides and "
                "dilations 1; got layout {} and a {}x{} kernel",
                kLabel, ctx.attrs.get_string("layout"), g.window.kernel[0], g.window.kernel[1]);
  }
  if (s.epilogue.has_bias) {
    const Dims& bias = ctx.input_type(2).dims;
    if (bias.rank() != 1 || (bias[0] != kUnknownDim && bias[0] != g.out_channels)) {
      throw_error(ErrorKind::ShapeMismatch, "{}: bias {} for {} output channels", kLabel,
                  bias.to_string(), g.out_channels);
    }
  }
  const Dims y = blocked_output(s, g);
  if (s.epilogue.has_residual) {
    const Dims& residual = ctx.input_type(ctx.num_inputs() - 1).dims;
    bool fits = residual.rank() == y.rank();
    for (int axis = 0; fits && axis < y.rank(); ++axis) {
      fits = residual[axis] == kUnknownDim || y[axis] == kUnknownDim || residual[axis] == y[axis];
    }
    if (!fits) {
      throw_error(ErrorKind::ShapeMismatch, "{}: residual {} for output {}", kLabel,
                  residual.to_string(), y.to_string());
    }
  }
  return {Type{DType::Float32, y}};
}

// The epilogue's inputs at run time: bias (index 2) and residual (last), checked.
void check_epilogue_inputs(const KernelContext& ctx, const Signature& s,
                           const detail::ConvGeometry& g) {
  if (s.epilogue.has_bias && ctx.input(2).numel() != g.out_channels) {
    throw_error(ErrorKind::ShapeMismatch, "{}: bias of {} values for {} output channels in {}",
                kLabel, ctx.input(2).numel(), g.out_channels, ctx.node->describe());
  }
  const Dims y = blocked_output(s, g);
  if (s.epilogue.has_residual && !(ctx.input(ctx.num_inputs - 1).shape() == y)) {
    throw_error(ErrorKind::ShapeMismatch, "{}: residual {} for output {} in {}", kLabel,
                ctx.input(ctx.num_inputs - 1).shape().to_string(), y.to_string(),
                ctx.node->describe());
  }
}

void compute_reference(KernelContext& ctx) {
  const Signature& s = node_state(ctx).signature;
  const detail::ConvGeometry g =
      geometry_of(*ctx.attrs, s, ctx.input(0).shape(), ctx.input(1).shape());
  check_epilogue_inputs(ctx, s, g);
  const Tensor x = s.in_blocked ? detail::unblock(ctx.input(0)) : ctx.input(0).contiguous();
  const Tensor w = detail::unpack_weights(s.layout, ctx.input(1), g.weight_shape());
  const Tensor plain_y = detail::run_plain_reference(ctx, "Conv", *ctx.attrs, {x, w})[0];
  std::vector<double> y = plain_y.to_doubles();
  const std::vector<double> bias =
      s.epilogue.has_bias ? ctx.input(2).to_doubles() : std::vector<double>();
  const bool plain = s.layout.block == 0;
  const Tensor& residual_input = ctx.input(ctx.num_inputs - 1);
  const std::vector<double> residual =
      !s.epilogue.has_residual ? std::vector<double>()
      : plain                  ? residual_input.to_doubles()
                               : detail::unblock(residual_input).to_doubles();
  const std::int64_t volume = g.window.output_volume();
  for (std::size_t i = 0; i < y.size(); ++i) {
    double value = y[i];
    if (s.epilogue.has_bias) {
      value += bias[static_cast<std::size_t>((static_cast<std::int64_t>(i) / volume) % g.out_channels)];
    }
    if (s.epilogue.has_residual) value += residual[i];
    y[i] = std::min(std::max(value, s.epilogue.lower), s.epilogue.upper);
  }
  Tensor& out = ctx.allocate_output(0, DType::Float32, blocked_output(s, g));
  if (plain) {
    detail::store_doubles(out, y);
  } else {
    detail::block_into(Tensor::from_doubles(DType::Float32, g.output_shape(), y), out);
  }
}

void compute_dnnl(KernelContext& ctx) {
  BlockedConvNodeState& state = node_state(ctx);
  const Signature& s = state.signature;
  const detail::ConvGeometry& g = call_geometry(ctx, state);
  check_epilogue_inputs(ctx, s, g);
  const Tensor x = ctx.input(0).contiguous();
  const Tensor w = ctx.input(1).contiguous();
  const Tensor bias = s.epilogue.has_bias ? ctx.input(2).contiguous() : Tensor();
  const Tensor residual =
      s.epilogue.has_residual ? ctx.input(ctx.num_inputs - 1).contiguous() : Tensor();
  Tensor& y = ctx.allocate_output(0, DType::Float32, blocked_output(s, g));
  const bool empty = x.numel() == 0 || y.numel() == 0;
  if (empty || !detail::run_blocked_conv_dnnl(ctx, state.primitive, g, s.layout, s.epilogue,
                                              s.winograd, x, w,
                                              s.epilogue.has_bias ? &bias : nullptr,
                                              s.epilogue.has_residual ? &residual : nullptr, y)) {
    compute_reference(ctx);
  }
}

Cost blocked_conv_cost(const CostContext& ctx) {
  const Dims& out = ctx.output_shapes[0];
  const Dims y = out.rank() == 5 ? detail::plain_shape(out) : out;
  const Dims w = plain_weight_shape(signature_of(ctx.attrs), ctx.input_shapes[1]);
  double elements = static_cast<double>(ctx.output_shapes[0].product());
  for (const Dims& shape : ctx.input_shapes) elements += static_cast<double>(shape.product());
  const double epilogue = static_cast<double>(y.product()) *
                         ((ctx.attrs.get_bool("has_bias") ? 1.0 : 0.0) +
                          (ctx.attrs.get_bool_or("has_residual", false) ? 1.0 : 0.0));
  return Cost{detail::conv_flops(y, w) + epilogue, elements * 4.0};
}

// "Conv2d{stride=(1,1),pad=(1,1),dilation=(1,1),groups=1,nChw16c,winograd,bias,residual,relu}".
std::string print_blocked_conv(const OpDef&, const Attrs& attrs) {
  std::string name = detail::conv_printed_name("", attrs);
  name.pop_back();
  const std::int64_t block = attrs.get_int("block");
  if (block == 0) {
    name += ",nchw";
  } else {
    name += attrs.get_bool("in_blocked") ? fmt::format(",nChw{}c", block)
                                         : fmt::format(",nchw>nChw{}c", block);
  }
  if (attrs.get_bool_or("winograd", false)) name += ",winograd";
  if (attrs.get_bool("has_bias")) name += ",bias";
  if (attrs.get_bool_or("has_residual", false)) name += ",residual";
  const double lower = attrs.get_double("lower");
  const double upper = attrs.get_double("upper");
  if (lower == 0.0 && std::isinf(upper)) {
    name += ",relu";
  } else if (std::isfinite(lower) || std::isfinite(upper)) {
    name += fmt::format(",clip({},{})", lower, upper);
  }
  return name + "}";
}
}  // namespace

void register_blocked_conv(OpRegistry& registry) {
  registry.add({.name = "BlockedConv",
                .family = "Conv",
                .summary = "Conv on channel-blocked data with packed weights, bias, residual and clamp (inference)",
                .num_inputs = -1,
                .infer = infer_blocked_conv,
                .reference = {"ref", compute_reference},
                .fast = {"dnnl", compute_dnnl,
                         [](std::span<const Variable> inputs, const Attrs&) {
                           return detail::inputs_are_float32(inputs, {0, 1});
                         }},
                .cost = blocked_conv_cost,
                .print = print_blocked_conv});
}

}  // namespace tscope::ops
