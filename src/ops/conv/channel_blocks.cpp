// SPDX-License-Identifier: Apache-2.0
#include "channel_blocks.h"

#include <fmt/format.h>

#include <optional>
#include <utility>
#include <vector>

#include "dnnl_util.h"
#include "reference_loops.h"
#include "tscope/core/error.h"
#include "tscope/ops/registry.h"

namespace tscope::ops::detail {
namespace {
// The flat packed index of w[o, c, h, w] (c within the group: always 0 for depthwise). Grouped
// weights are OIhwBiBo per group; as each group's O/G is a multiple of the block, that is
// OIhwBiBo of the whole (O, C/G, kh, kw) tensor.
std::int64_t packed_index(WeightLayout layout, const Dims& plain, std::int64_t o, std::int64_t c,
                          std::int64_t h, std::int64_t w) {
  const std::int64_t b = layout.block;
  const std::int64_t channels = plain[1];
  const std::int64_t kh = plain[2];
  const std::int64_t kw = plain[3];
  switch (layout.kind) {
    case WeightKind::Plain: return ((o * channels + c) * kh + h) * kw + w;
    case WeightKind::BlockedInOut:
    case WeightKind::Grouped: {
      const std::int64_t cb_count = channels / b;
      return ((((o / b) * cb_count + c / b) * kh + h) * kw + w) * b * b + (c % b) * b + o % b;
    }
    case WeightKind::BlockedOut:
      return ((((o / b) * kh + h) * kw + w) * channels + c) * b + o % b;
    case WeightKind::Depthwise: break;
  }
  return (((o / b) * kh + h) * kw + w) * b + o % b;
}

// Calls visit(plain_flat, packed_flat) for every weight.
template <class Visit>
void for_each_weight(WeightLayout layout, const Dims& plain, Visit&& visit) {
  std::int64_t flat = 0;
  for (std::int64_t o = 0; o < plain[0]; ++o) {
    for (std::int64_t c = 0; c < plain[1]; ++c) {
      for (std::int64_t h = 0; h < plain[2]; ++h) {
        for (std::int64_t w = 0; w < plain[3]; ++w) visit(flat++, packed_index(layout, plain, o, c, h, w));
      }
    }
  }
}

// Calls visit(plain_flat, blocked_flat) for every element of plain (N, C, spatial...) stored in
// blocks of `block` channels.
template <class Visit>
void for_each_image_element(const Dims& plain, std::int64_t block, Visit&& visit) {
  const std::int64_t channels = plain[1];
  std::int64_t volume = 1;
  for (int axis = 2; axis < plain.rank(); ++axis) volume *= plain[axis];
  std::int64_t flat = 0;
  for (std::int64_t n = 0; n < plain[0]; ++n) {
    for (std::int64_t c = 0; c < channels; ++c) {
      // Channels that fill no whole block are padded up to one (ToChannelBlocks).
      const std::int64_t plane = (n * ((channels + block - 1) / block) + c / block) * volume;
      for (std::int64_t s = 0; s < volume; ++s) visit(flat++, (plane + s) * block + c % block);
    }
  }
}

struct ReorderState final : KernelState {
  Dims from_shape;
  DnnlCall call;
};
}  // namespace

WeightLayout weight_layout_from(const std::string& name, std::string_view label) {
  // Every layout with its name, formatted once. Leaked: a kernel may run from an exit handler.
  using NamedLayouts = std::vector<std::pair<std::string, WeightLayout>>;
  static const NamedLayouts& kNamed = *new NamedLayouts([] {
    std::vector<std::pair<std::string, WeightLayout>> named{
        {std::string(kPlainConvLayout), {WeightKind::Plain, 0}}};
    for (std::int64_t block : kChannelBlockSizes) {
      for (WeightKind kind : {WeightKind::BlockedInOut, WeightKind::BlockedOut,
                              WeightKind::Depthwise, WeightKind::Grouped}) {
        named.emplace_back(weight_layout_name({kind, block}), WeightLayout{kind, block});
      }
    }
    return named;
  }());
  for (const auto& [layout_name, layout] : kNamed) {
    if (name == layout_name) return layout;
  }
  throw_error(ErrorKind::InvalidArgument,
              "{}: unknown weight layout '{}' (OIhwBiBo, OhwiBo, GoihwBg or gOIhwBiBo for a block "
              "B of 8 or 16, or oihw)",
              label, name);
}

std::string weight_layout_name(WeightLayout layout) {
  const std::int64_t b = layout.block;
  switch (layout.kind) {
    case WeightKind::Plain: return std::string(kPlainConvLayout);
    case WeightKind::BlockedInOut: return fmt::format("OIhw{}i{}o", b, b);
    case WeightKind::BlockedOut: return fmt::format("Ohwi{}o", b);
    case WeightKind::Grouped:
      return fmt::format("gOIhw{}i{}o", b, b);
    case WeightKind::Depthwise: break;
  }
  return fmt::format("Goihw{}g", b);
}

dnnl::memory::format_tag weight_format_tag(WeightLayout layout) {
  using tag = dnnl::memory::format_tag;
  const bool wide = layout.block == 16;
  switch (layout.kind) {
    case WeightKind::Plain: return tag::oihw;
    case WeightKind::BlockedInOut: return wide ? tag::OIhw16i16o : tag::OIhw8i8o;
    case WeightKind::BlockedOut: return wide ? tag::Ohwi16o : tag::Ohwi8o;
    case WeightKind::Grouped:
      return wide ? tag::gOIhw16i16o : tag::gOIhw8i8o;
    case WeightKind::Depthwise: break;
  }
  return wide ? tag::Goihw16g : tag::Goihw8g;
}

bool reads_blocked_input(WeightLayout layout) {
  return layout.kind != WeightKind::BlockedOut && layout.kind != WeightKind::Plain;
}

std::int64_t check_block_attr(const Attrs& attrs, std::string_view label) {
  const std::int64_t block = attrs.get_int("block");
  if (!is_channel_block(block)) {
    throw_error(ErrorKind::InvalidArgument, "{}: block {} is not supported (8 or 16)", label,
                block);
  }
  return block;
}

Dims padded_blocked_shape(const Dims& plain, std::int64_t block, std::string_view label) {
  if (plain.rank() != 4) {
    throw_error(ErrorKind::TypeMismatch, "{}: expects (N, C, H, W) data, got rank {}", label,
                plain.rank());
  }
  const std::int64_t channels = plain[1];
  return Dims{plain[0], channels == kUnknownDim ? kUnknownDim : (channels + block - 1) / block,
              plain[2], plain[3], block};
}

Dims blocked_shape(const Dims& plain, std::int64_t block, std::string_view label) {
  const Dims blocked = padded_blocked_shape(plain, block, label);
  const std::int64_t channels = plain[1];
  if (channels != kUnknownDim && channels % block != 0) {
    throw_error(ErrorKind::ShapeMismatch,
                "{}: {} channels in {} are not a multiple of the block {}", label, channels,
                plain.to_string(), block);
  }
  return blocked;
}

Dims plain_shape(const Dims& blocked) {
  const std::int64_t blocks = blocked[1];
  const bool known = blocks != kUnknownDim && blocked[4] != kUnknownDim;
  return Dims{blocked[0], known ? blocks * blocked[4] : kUnknownDim, blocked[2], blocked[3]};
}

void check_blocked_dims(const Dims& blocked, std::int64_t block, std::string_view label) {
  if (blocked.rank() != 5 || (blocked[4] != block && blocked[4] != kUnknownDim)) {
    throw_error(ErrorKind::ShapeMismatch, "{}: expects blocked (N, C/{}, H, W, {}) data, got {}",
                label, block, block, blocked.to_string());
  }
}

Dims packed_weight_shape(WeightLayout layout, const Dims& w, std::int64_t groups,
                         std::string_view label) {
  if (w.rank() != 4) {
    throw_error(ErrorKind::TypeMismatch, "{}: expects OIHW weights, got rank {}", label, w.rank());
  }
  const auto fail = [&](std::string_view why) {
    throw_error(ErrorKind::ShapeMismatch, "{}: weights {} do not suit the layout: {}", label,
                w.to_string(), why);
  };
  for (std::int64_t dim : w) {
    if (dim == kUnknownDim) fail("their shape must be static");
  }
  const std::int64_t b = layout.block;
  if (layout.kind != WeightKind::Plain && w[0] % b != 0) {
    fail(fmt::format("O is not a multiple of {}", b));
  }
  switch (layout.kind) {
    case WeightKind::Plain:
      if (groups != 1) fail("needs groups 1");
      return w;
    case WeightKind::BlockedInOut:
      if (groups != 1 || w[1] % b != 0) fail(fmt::format("needs groups 1 and C a multiple of {}", b));
      return Dims{w[0] / b, w[1] / b, w[2], w[3], b, b};
    case WeightKind::BlockedOut:
      if (groups != 1) fail("needs groups 1");
      return Dims{w[0] / b, w[2], w[3], w[1], b};
    case WeightKind::Grouped:
      if (groups < 2 || w[0] % groups != 0 || (w[0] / groups) % b != 0 || w[1] % b != 0) {
        fail(fmt::format("needs groups above 1 and O/G and C/G multiples of {} (groups {})", b,
                         groups));
      }
      return Dims{groups, w[0] / groups / b, w[1] / b, w[2], w[3], b, b};
    case WeightKind::Depthwise: break;
  }
  if (w[1] != 1 || groups != w[0]) fail("depthwise weights are (C, 1, kh, kw) with groups C");
  return Dims{w[0] / b, w[2], w[3], b};
}

Dims unpacked_weight_shape(WeightLayout layout, const Dims& packed, std::int64_t channels) {
  const std::int64_t b = layout.block;
  switch (layout.kind) {
    case WeightKind::Plain: return packed;
    case WeightKind::BlockedInOut: return Dims{packed[0] * b, packed[1] * b, packed[2], packed[3]};
    case WeightKind::BlockedOut: return Dims{packed[0] * b, channels, packed[1], packed[2]};
    case WeightKind::Grouped:
      return Dims{packed[0] * packed[1] * b, packed[2] * b, packed[3], packed[4]};
    case WeightKind::Depthwise: break;
  }
  return Dims{packed[0] * b, 1, packed[1], packed[2]};
}

Tensor unblock(const Tensor& blocked) {
  const Dims plain = plain_shape(blocked.shape());
  const std::vector<double> in = blocked.to_doubles();
  std::vector<double> out(in.size());
  for_each_image_element(plain, blocked.shape()[4], [&](std::int64_t p, std::int64_t b) {
    out[static_cast<std::size_t>(p)] = in[static_cast<std::size_t>(b)];
  });
  return Tensor::from_doubles(blocked.dtype(), plain, out);
}

void block_into(const Tensor& plain, Tensor& out) {
  const std::vector<double> in = plain.to_doubles();
  std::vector<double> values(static_cast<std::size_t>(out.numel()), 0.0);  // padding stays 0
  for_each_image_element(plain.shape(), out.shape()[4], [&](std::int64_t p, std::int64_t b) {
    values[static_cast<std::size_t>(b)] = in[static_cast<std::size_t>(p)];
  });
  store_doubles(out, values);
}

void pack_weights_into(WeightLayout layout, const Tensor& w, Tensor& out) {
  const std::vector<double> in = w.to_doubles();
  std::vector<double> values(in.size());
  for_each_weight(layout, w.shape(), [&](std::int64_t p, std::int64_t packed) {
    values[static_cast<std::size_t>(packed)] = in[static_cast<std::size_t>(p)];
  });
  store_doubles(out, values);
}

Tensor unpack_weights(WeightLayout layout, const Tensor& packed, const Dims& plain_shape) {
  const std::vector<double> in = packed.to_doubles();
  std::vector<double> values(in.size());
  for_each_weight(layout, plain_shape, [&](std::int64_t p, std::int64_t packed_flat) {
    values[static_cast<std::size_t>(p)] = in[static_cast<std::size_t>(packed_flat)];
  });
  return Tensor::from_doubles(packed.dtype(), plain_shape, values);
}

dnnl::memory::desc dnnl_image_desc(const Dims& plain_shape, std::int64_t block) {
  if (block == 0) return dnnl_plain_desc(plain_shape);
  const dnnl::memory::dims dims(plain_shape.begin(), plain_shape.end());
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32,
                            block == 16 ? dnnl::memory::format_tag::nChw16c
                                        : dnnl::memory::format_tag::nChw8c);
}

dnnl::memory::desc dnnl_weight_desc(WeightLayout layout,
                                    const Dims& plain_shape,
                                    std::int64_t groups,
                                    bool packed) {
  using tag = dnnl::memory::format_tag;
  dnnl::memory::dims dims(plain_shape.begin(), plain_shape.end());
  if (layout.kind == WeightKind::Grouped) {
    // (G, O/G, C/G, kh, kw): the same bytes as OIHW (O, C/G, kh, kw).
    dims = {groups, plain_shape[0] / groups, plain_shape[1], plain_shape[2], plain_shape[3]};
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32,
                              packed ? weight_format_tag(layout) : tag::goihw);
  }
  if (layout.kind == WeightKind::Depthwise) {
    // (G, O/G = 1, C/G = 1, kh, kw): the same bytes as OIHW (C, 1, kh, kw).
    dims = {plain_shape[0], 1, 1, plain_shape[2], plain_shape[3]};
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32,
                              packed ? weight_format_tag(layout) : tag::goihw);
  }
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32,
                            packed ? weight_format_tag(layout) : tag::oihw);
}

std::vector<Tensor> run_plain_reference(const KernelContext& outer, std::string_view op_name,
                                        const Attrs& attrs, const std::vector<Tensor>& inputs) {
  const OpDef& op = tscope::op_def(op_name);
  std::vector<const Tensor*> input_slots;
  for (const Tensor& input : inputs) input_slots.push_back(&input);
  std::vector<Tensor> outputs(static_cast<std::size_t>(op.num_outputs));
  std::vector<Tensor*> output_slots;
  for (Tensor& output : outputs) output_slots.push_back(&output);
  KernelContext inner;
  inner.node = outer.node;
  inner.attrs = &attrs;
  inner.inputs = input_slots.data();
  inner.outputs = output_slots.data();
  inner.num_inputs = static_cast<int>(inputs.size());
  inner.num_outputs = op.num_outputs;
  inner.allocator = outer.allocator;
  op.reference.fn(inner);
  return outputs;
}

void run_dnnl_reorder(std::shared_ptr<KernelState>& slot, const dnnl::memory::desc& from_desc,
                      const dnnl::memory::desc& to_desc, const Tensor& from, const Tensor& to) {
  auto* state = dynamic_cast<ReorderState*>(slot.get());
  if (state == nullptr || !(state->from_shape == from.shape())) {
    auto fresh = std::make_shared<ReorderState>();
    fresh->from_shape = from.shape();
    try {
      const dnnl::reorder::primitive_desc pd(dnnl_engine(), from_desc, dnnl_engine(), to_desc,
                                             dnnl_attr());
      fresh->call.primitive = dnnl::reorder(pd);
      fresh->call.impl = pd.impl_info_str();
      fresh->call.args = {{DNNL_ARG_FROM, dnnl_unbound_memory(from_desc)},
                          {DNNL_ARG_TO, dnnl_unbound_memory(to_desc)}};
      dnnl_add_scratchpad(fresh->call, pd);
    } catch (const dnnl::error& error) {
      throw Error(ErrorKind::Internal, fmt::format("oneDNN rejected a reorder: {}", error.what()));
    }
    state = fresh.get();
    slot = std::move(fresh);
  }
  dnnl_bind(state->call, DNNL_ARG_FROM, from.raw_data());
  dnnl_bind(state->call, DNNL_ARG_TO, to.raw_data());
  dnnl_execute(state->call);
}

}  // namespace tscope::ops::detail

namespace tscope {

std::int64_t preferred_channel_block() {
  static const std::int64_t block =
      dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core ? 16 : 8;
  return block;
}

bool winograd_available() { return preferred_channel_block() == 16; }

bool suits_winograd(const Attrs& attrs, std::int64_t kernel_h, std::int64_t kernel_w) {
  const ops::detail::WeightLayout layout =
      ops::detail::weight_layout_from(attrs.get_string("layout"), "suits_winograd");
  return layout.kind == ops::detail::WeightKind::BlockedInOut &&
         suits_winograd_window(attrs, layout.block, kernel_h, kernel_w);
}

bool suits_winograd_window(const Attrs& attrs,
                           std::int64_t block,
                           std::int64_t kernel_h,
                           std::int64_t kernel_w) {
  if (block != 16 || attrs.get_int("groups") != 1 || kernel_h != 3 || kernel_w != 3) {
    return false;
  }
  const ops::detail::WindowAttrs window = ops::detail::read_window_attrs(attrs, "suits_winograd");
  if (window.spatial_rank != 2) return false;
  for (int axis = 0; axis < 2; ++axis) {
    if (window.stride[axis] != 1 || window.dilation[axis] != 1) return false;
  }
  return true;
}

bool winograd_pays_off(std::int64_t out_h, std::int64_t out_w, std::int64_t channels) {
  if (out_h == kUnknownDim || out_w == kUnknownDim || channels == kUnknownDim) return true;
  // The threshold comes from timing both kernels on ResNet's 3x3 layers at several image sizes
  // (docs/conv.md, "Winograd").
  constexpr std::int64_t kMinTileChannels = 4096;
  const std::int64_t tiles = ((out_h + 1) / 2) * ((out_w + 1) / 2);
  return tiles * channels >= kMinTileChannels;
}

std::optional<std::string> blocked_weight_layout(std::int64_t channels, std::int64_t out_channels,
                                                 std::int64_t groups, std::int64_t block) {
  using ops::detail::WeightKind;
  if (!is_channel_block(block)) {
    throw_error(ErrorKind::InvalidArgument, "blocked_weight_layout: block {} (8 or 16)", block);
  }
  if (channels <= 0 || out_channels <= 0 || out_channels % block != 0) return std::nullopt;
  const auto named = [block](WeightKind kind) {
    return ops::detail::weight_layout_name({kind, block});
  };
  if (groups == 1) {
    if (channels % block == 0) return named(WeightKind::BlockedInOut);
    if (channels < block) return named(WeightKind::BlockedOut);
    return std::nullopt;
  }
  if (groups == channels && groups == out_channels && channels % block == 0) {
    return named(WeightKind::Depthwise);
  }
  if (groups > 1 && channels % groups == 0 && out_channels % groups == 0 &&
      (channels / groups) % block == 0 && (out_channels / groups) % block == 0) {
    return named(WeightKind::Grouped);
  }
  return std::nullopt;
}

bool input_runs_blocked(std::string_view layout) {
  return ops::detail::reads_blocked_input(
      ops::detail::weight_layout_from(std::string(layout), "input_runs_blocked"));
}

Attrs blocked_conv_attrs(const Attrs& conv_attrs, const std::string& layout,
                         std::int64_t channels, std::int64_t out_channels,
                         const BlockedConvEpilogue& epilogue) {
  Attrs attrs = conv_attrs;
  attrs.set("layout", layout);
  attrs.set("block", ops::detail::weight_layout_from(layout, "blocked_conv_attrs").block);
  attrs.set("in_blocked", input_runs_blocked(layout));
  attrs.set("channels", channels);
  attrs.set("out_channels", out_channels);
  attrs.set("has_bias", epilogue.has_bias);
  attrs.set("has_residual", epilogue.has_residual);
  attrs.set("lower", epilogue.lower);
  attrs.set("upper", epilogue.upper);
  return attrs;
}

}  // namespace tscope
