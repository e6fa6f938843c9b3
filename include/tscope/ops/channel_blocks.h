// SPDX-License-Identifier: Apache-2.0
#pragma once
/// What code that creates the channel-blocked ops needs to know (docs/conv.md, "Channel-blocked
/// layout"): the weight layout a convolution runs with, if any, and the attrs of a BlockedConv.
/// The ops themselves (ToChannelBlocks, FromChannelBlocks, PackConvWeights, BlockedConv,
/// BlockedMaxPool, BlockedAvgPool) are compiler-internal and created with apply_op by name:
///
///   const std::int64_t block = preferred_channel_block();                        // 8 or 16
///   const auto layout = blocked_weight_layout(channels, out_channels, groups, block);
///                                                                          // "OIhw16i16o"
///   Attrs attrs = blocked_conv_attrs(conv.attrs(), *layout, channels, out_channels,
///                                    {.has_bias = true, .lower = 0});              // + ReLU
///   // inputs: x (blocked when input_runs_blocked(*layout)), PackConvWeights(w), bias
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "tscope/graph/attrs.h"

#pragma GCC visibility push(default)

namespace tscope {

/// The channel blocks the blocked ops support (attr "block"): the float32 lanes of one AVX2
/// register (8) and of one AVX-512 register (16).
inline constexpr std::array<std::int64_t, 2> kChannelBlockSizes{8, 16};

/// Whether `block` is one of kChannelBlockSizes.
[[nodiscard]] constexpr bool is_channel_block(std::int64_t block) {
  return block == kChannelBlockSizes[0] || block == kChannelBlockSizes[1];
}

/// The block oneDNN's fastest convolutions on this CPU read: 16 where it runs AVX-512 code, 8
/// otherwise (on an AVX-512 machine, nChw8c data sends oneDNN to its AVX2 kernels).
[[nodiscard]] std::int64_t preferred_channel_block();

/// Whether oneDNN has its Winograd F(2x2, 3x3) convolution on this CPU: AVX-512 code on 16-channel
/// blocks (oneDNN's effective ISA at least avx512_core).
[[nodiscard]] bool winograd_available();

/// Whether a BlockedConv with `attrs` (as blocked_conv_attrs makes them) and a kh x kw kernel may
/// run Winograd (BlockedConv's attr "winograd"): blocked input and output on 16-channel blocks
/// (OIhw16i16o), groups 1, a 3x3 kernel, strides and dilations 1.
[[nodiscard]] bool suits_winograd(const Attrs& attrs, std::int64_t kernel_h, std::int64_t kernel_w);

/// The window part of suits_winograd, for any convolution op with a window and "groups" in
/// `attrs` whose blocked activations have `block` channels per block (BlockedConvGradI and
/// BlockedConvGradW, whose attr "winograd" it allows): block 16, groups 1, a 3x3 kernel, strides
/// and dilations 1.
[[nodiscard]] bool suits_winograd_window(const Attrs& attrs,
                                         std::int64_t block,
                                         std::int64_t kernel_h,
                                         std::int64_t kernel_w);

/// Whether Winograd F(2x2, 3x3) is expected to beat the direct convolution on an output of
/// out_h x out_w per image from `channels` input channels: its per-call transforms of every 2x2
/// output tile cost in proportion to tiles x channels, while the multiplications it saves grow
/// with tiles x channels^2, so small images with few channels (late layers of a network on small
/// inputs) run faster direct. True when the spatial extents are unknown statically.
[[nodiscard]] bool winograd_pays_off(std::int64_t out_h, std::int64_t out_w, std::int64_t channels);

/// The packed weight layout (PackConvWeights' and BlockedConv's attr "layout") for a float32 2-D
/// convolution with `channels` inputs, `out_channels` outputs and `groups` on blocks of `block`
/// channels (8 or 16; B below), or nullopt when it cannot run blocked. Every layout needs
/// `out_channels` a multiple of B; then
///   - "OIhwBiBo": groups 1, channels a multiple of B (blocked input);
///   - "OhwiBo":   groups 1, channels below B (plain input: a first layer on RGB images);
///   - "GoihwBg":  depthwise, groups = channels = out_channels (blocked input);
///   - "gOIhwBiBo": grouped, each group's input and output channels multiples of B (blocked
///     input).
[[nodiscard]] std::optional<std::string> blocked_weight_layout(std::int64_t channels,
                                                               std::int64_t out_channels,
                                                               std::int64_t groups,
                                                               std::int64_t block);

/// The "layout" of a BlockedConv on plain data (block 0, groups 1, weights as they are): the op
/// takes any epilogue; use_channel_blocks gives a convolution that fits no block only its bias
/// add (oneDNN's bias argument), as oneDNN 2.6 runs post-ops on plain convolutions slowly.
inline constexpr std::string_view kPlainConvLayout = "oihw";

/// Whether a BlockedConv with weights in `layout` reads blocked input (BlockedConv's attr
/// "in_blocked"): all layouts but "OhwiBo" and "oihw". Throws InvalidArgument for an unknown
/// layout.
[[nodiscard]] bool input_runs_blocked(std::string_view layout);

/// What a BlockedConv applies after the convolution: y = clamp(conv + bias + residual, lower,
/// upper). The bias (O,) and the residual (in the output's layout and shape) are extra inputs, in
/// that order. lower 0 and upper +inf is ReLU, 0 and 6 ReLU6; infinite bounds mean none.
struct BlockedConvEpilogue {
  bool has_bias = false;
  bool has_residual = false;
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
};

/// The attrs of a BlockedConv standing for a Conv with `conv_attrs` (strides, pads, dilations,
/// groups, ... kept as they are): adds layout, block (the layout's; 0 for "oihw"), in_blocked,
/// channels, out_channels, has_bias, has_residual, lower and upper.
[[nodiscard]] Attrs blocked_conv_attrs(const Attrs& conv_attrs,
                                       const std::string& layout,
                                       std::int64_t channels,
                                       std::int64_t out_channels,
                                       const BlockedConvEpilogue& epilogue = {});

}  // namespace tscope

#pragma GCC visibility pop
