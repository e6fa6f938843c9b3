// SPDX-License-Identifier: Apache-2.0
// The channel-blocked layout shared by ToChannelBlocks, FromChannelBlocks, PackConvWeights,
// BlockedConv and the blocked pools, for a block B of 8 or 16 channels (attr "block"). oneDNN's
// nChwBc layout of an (N, C, H, W) tensor with C % B == 0 is, byte for byte, the row-major tensor
// (N, C/B, H, W, B), so blocked data stays an ordinary tensor with a real shape (elementwise ops
// run on it unchanged, the profile shows it). Packed convolution weights are likewise plain
// tensors whose shape spells oneDNN's weight format (shown for B = 8):
//   OIhw8i8o  (O/8, C/8, kh, kw, 8, 8)  w[ob*8+o, cb*8+i, h, w]   (groups 1, blocked input)
//   Ohwi8o    (O/8, kh, kw, C, 8)       w[ob*8+o, c, h, w]        (groups 1, plain input, C < 8)
//   Goihw8g   (G/8, kh, kw, 8)          w[gb*8+g, 0, h, w]        (depthwise: groups = C = O)
//   gOIhw8i8o (G, O/G/8, C/G/8, kh, kw, 8, 8)                      (grouped: C/G, O/G multiples
//             w[g*O/G + ob*8+o, cb*8+i, h, w]                        of 8; OIhw8i8o per group)
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tscope/core/dims.h"
#include "tscope/core/tensor.h"
#include "tscope/graph/attrs.h"
#include "tscope/graph/op_def.h"
#include "tscope/ops/channel_blocks.h"

namespace tscope::ops::detail {

/// How packed weights are arranged: blocks of inputs and outputs (OIhwBiBo), blocks of outputs
/// over plain inputs (OhwiBo), blocks of depthwise groups (GoihwBg), blocks of inputs and outputs
/// within each group (gOIhwBiBo), or not at all ("oihw", block 0: a BlockedConv on plain data,
/// groups 1, which still fuses its bias, residual and clamp).
enum class WeightKind { BlockedInOut, BlockedOut, Depthwise, Grouped, Plain };

/// A packed weight layout: its kind and its block.
struct WeightLayout {
  WeightKind kind;
  std::int64_t block;
};

/// Parses the "layout" attr; throws InvalidArgument naming `label` and the value otherwise.
[[nodiscard]] WeightLayout weight_layout_from(const std::string& name, std::string_view label);
/// The "layout" attr's value for `layout` ("OIhw16i16o", ...).
[[nodiscard]] std::string weight_layout_name(WeightLayout layout);
[[nodiscard]] dnnl::memory::format_tag weight_format_tag(WeightLayout layout);
/// Whether a convolution with these weights reads blocked input (all but OhwiBo).
[[nodiscard]] bool reads_blocked_input(WeightLayout layout);

/// Reads attr "block" and returns it; throws InvalidArgument naming `label` unless it is one of
/// kChannelBlockSizes.
std::int64_t check_block_attr(const Attrs& attrs, std::string_view label);

/// (N, C, H, W) -> (N, C/B, H, W, B); kUnknownDim entries stay unknown. Throws ShapeMismatch
/// naming `label` when a known C is not a multiple of the block.
[[nodiscard]] Dims blocked_shape(const Dims& plain, std::int64_t block, std::string_view label);
/// (N, C, H, W) -> (N, ceil(C/B), H, W, B): the last block's channels beyond C are padding.
[[nodiscard]] Dims padded_blocked_shape(const Dims& plain,
                                        std::int64_t block,
                                        std::string_view label);
/// (N, Cb, H, W, B) -> (N, Cb * B, H, W).
[[nodiscard]] Dims plain_shape(const Dims& blocked);
/// Throws ShapeMismatch naming `label` unless `blocked` is (N, C/B, H, W, B) with B = `block`
/// (or unknown: a type's dims).
void check_blocked_dims(const Dims& blocked, std::int64_t block, std::string_view label);

/// The packed shape of OIHW weights `w` (which must suit `layout`; ShapeMismatch otherwise) and
/// the OIHW shape of packed weights for a convolution with `channels` inputs and `groups`.
[[nodiscard]] Dims packed_weight_shape(WeightLayout layout, const Dims& w, std::int64_t groups,
                                       std::string_view label);
[[nodiscard]] Dims unpacked_weight_shape(WeightLayout layout, const Dims& packed,
                                         std::int64_t channels);

/// Reference permutations (values through doubles, any float dtype), the block read from the
/// blocked shape. unblock() returns a fresh contiguous tensor; block_into() writes into `out`,
/// already allocated with the blocked shape.
[[nodiscard]] Tensor unblock(const Tensor& blocked);
void block_into(const Tensor& plain, Tensor& out);
/// OIHW -> packed (into `out`, allocated with the packed shape) and packed -> OIHW.
void pack_weights_into(WeightLayout layout, const Tensor& w, Tensor& out);
[[nodiscard]] Tensor unpack_weights(WeightLayout layout, const Tensor& packed,
                                    const Dims& plain_shape);

/// oneDNN descriptors of logical (N, C, H, W) data stored plain (nchw, block 0) or blocked
/// (nChw8c, nChw16c).
[[nodiscard]] dnnl::memory::desc dnnl_image_desc(const Dims& plain_shape, std::int64_t block);
/// The descriptor of OIHW weights in `layout` for a convolution with `groups` (depthwise and
/// grouped as (G, O/G, C/G, kh, kw)), plain or packed.
[[nodiscard]] dnnl::memory::desc dnnl_weight_desc(WeightLayout layout,
                                                  const Dims& plain_shape,
                                                  std::int64_t groups,
                                                  bool packed);

/// Runs the reference kernel of op `op_name` on `inputs` with `attrs`, under `outer`'s node (for
/// error context) and allocator: the blocked ops' reference kernels are the plain ops' reference
/// kernels between unblock() and block_into(), so both layouts share one oracle.
[[nodiscard]] std::vector<Tensor> run_plain_reference(const KernelContext& outer,
                                                      std::string_view op_name, const Attrs& attrs,
                                                      const std::vector<Tensor>& inputs);

/// Copies `from` into `to` (both contiguous float32, one byte size) with a oneDNN reorder between
/// the two descriptors, keeping the primitive in `state` (the node's ctx.state, or a slot of a
/// node state that keeps more) until the shapes change.
void run_dnnl_reorder(std::shared_ptr<KernelState>& state, const dnnl::memory::desc& from_desc,
                      const dnnl::memory::desc& to_desc, const Tensor& from, const Tensor& to);

}  // namespace tscope::ops::detail
