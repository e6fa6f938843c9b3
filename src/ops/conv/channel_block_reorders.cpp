// SPDX-License-Identifier: Apache-2.0
// ToChannelBlocks, FromChannelBlocks and PackConvWeights: the copies that move data into and out
// of the channel-blocked layout (channel_blocks.h). The compiler inserts them (rewrite rule
// use_channel_blocks) after differentiation, so they have no gradient. PackConvWeights of a
// constant is folded at compile time (fold_when_constant).
#include "channel_blocks.h"
#include "dnnl_util.h"
#include "reference_loops.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
constexpr std::string_view kTo = "ToChannelBlocks";
constexpr std::string_view kFrom = "FromChannelBlocks";
constexpr std::string_view kPack = "PackConvWeights";

void check_float32(const InferContext& ctx, std::string_view label) {
  if (ctx.input_type(0).dtype != DType::Float32) {
    throw_error(ErrorKind::TypeMismatch, "{}: expects float32, got {}", label,
                dtype_name(ctx.input_type(0).dtype));
  }
}

// Reads and writes every element once.
Cost copy_cost(const CostContext& ctx) {
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  return Cost{0, 2.0 * static_cast<double>(ctx.input_shapes[0].product()) * item};
}

// ---- ToChannelBlocks ----
std::vector<Type> infer_to_blocks(const InferContext& ctx) {
  check_float32(ctx, kTo);
  const std::int64_t block = detail::check_block_attr(ctx.attrs, kTo);
  return {Type{DType::Float32, detail::padded_blocked_shape(ctx.input_type(0).dims, block, kTo)}};
}

void to_blocks_reference(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::int64_t block = detail::check_block_attr(*ctx.attrs, kTo);
  Tensor& y =
      ctx.allocate_output(0, x.dtype(), detail::padded_blocked_shape(x.shape(), block, kTo));
  detail::block_into(x, y);
}

void to_blocks_dnnl(KernelContext& ctx) {
  const Tensor x = ctx.input(0).contiguous();
  const std::int64_t block = detail::check_block_attr(*ctx.attrs, kTo);
  Tensor& y =
      ctx.allocate_output(0, x.dtype(), detail::padded_blocked_shape(x.shape(), block, kTo));
  if (x.numel() == 0) return;
  // With channels that fill no whole block, the destination descriptor's padded dims are y's
  // channels, and the reorder writes zeros into the padding.
  detail::run_dnnl_reorder(ctx.state, detail::dnnl_image_desc(x.shape(), 0),
                           detail::dnnl_image_desc(x.shape(), block), x, y);
}

// ---- FromChannelBlocks ----
std::vector<Type> infer_from_blocks(const InferContext& ctx) {
  check_float32(ctx, kFrom);
  const std::int64_t block = detail::check_block_attr(ctx.attrs, kFrom);
  const Dims& blocked = ctx.input_type(0).dims;
  detail::check_blocked_dims(blocked, block, kFrom);
  return {Type{DType::Float32, detail::plain_shape(blocked)}};
}

std::int64_t check_blocked_tensor(const KernelContext& ctx) {
  const std::int64_t block = detail::check_block_attr(*ctx.attrs, kFrom);
  detail::check_blocked_dims(ctx.input(0).shape(), block, kFrom);
  return block;
}

void from_blocks_reference(KernelContext& ctx) {
  check_blocked_tensor(ctx);
  const Tensor plain = detail::unblock(ctx.input(0));
  Tensor& y = ctx.allocate_output(0, plain.dtype(), plain.shape());
  detail::store_doubles(y, plain.to_doubles());
}

void from_blocks_dnnl(KernelContext& ctx) {
  const std::int64_t block = check_blocked_tensor(ctx);
  const Tensor x = ctx.input(0).contiguous();
  const Dims plain = detail::plain_shape(x.shape());
  Tensor& y = ctx.allocate_output(0, x.dtype(), plain);
  if (x.numel() == 0) return;
  detail::run_dnnl_reorder(ctx.state, detail::dnnl_image_desc(plain, block),
                           detail::dnnl_image_desc(plain, 0), x, y);
}

// ---- PackConvWeights ----
// The "layout" attr, whose block must be the "block" attr.
detail::WeightLayout layout_of(const Attrs& attrs) {
  const detail::WeightLayout layout = detail::weight_layout_from(attrs.get_string("layout"), kPack);
  const std::int64_t block = detail::check_block_attr(attrs, kPack);
  if (layout.block != block) {
    throw_error(ErrorKind::InvalidArgument, "{}: layout {} does not have block {}", kPack,
                attrs.get_string("layout"), block);
  }
  return layout;
}

// What a PackConvWeights node keeps between calls: its layout, read from the attrs on the first
// call, and the oneDNN reorder.
struct PackState final : KernelState {
  detail::WeightLayout layout;
  std::int64_t groups;
  std::shared_ptr<KernelState> reorder;
};

PackState& pack_state(KernelContext& ctx) {
  if (auto* state = dynamic_cast<PackState*>(ctx.state.get())) return *state;
  auto fresh = std::make_shared<PackState>();
  fresh->layout = layout_of(*ctx.attrs);
  fresh->groups = ctx.attrs->get_int("groups");
  PackState& state = *fresh;
  ctx.state = std::move(fresh);
  return state;
}

std::vector<Type> infer_pack(const InferContext& ctx) {
  check_float32(ctx, kPack);
  return {Type{DType::Float32,
               detail::packed_weight_shape(layout_of(ctx.attrs), ctx.input_type(0).dims,
                                           ctx.attrs.get_int("groups"), kPack)}};
}

Tensor& allocate_packed(KernelContext& ctx, const PackState& state) {
  const Dims packed =
      detail::packed_weight_shape(state.layout, ctx.input(0).shape(), state.groups, kPack);
  return ctx.allocate_output(0, ctx.input(0).dtype(), packed);
}

void pack_reference(KernelContext& ctx) {
  const PackState& state = pack_state(ctx);
  Tensor& y = allocate_packed(ctx, state);
  detail::pack_weights_into(state.layout, ctx.input(0), y);
}

void pack_dnnl(KernelContext& ctx) {
  PackState& state = pack_state(ctx);
  const Tensor w = ctx.input(0).contiguous();
  Tensor& y = allocate_packed(ctx, state);
  detail::run_dnnl_reorder(
      state.reorder, detail::dnnl_weight_desc(state.layout, w.shape(), state.groups, false),
      detail::dnnl_weight_desc(state.layout, w.shape(), state.groups, true), w, y);
}

bool float32_input(std::span<const Variable> inputs, const Attrs&) {
  return detail::inputs_are_float32(inputs, {0});
}
}  // namespace

void register_channel_block_reorders(OpRegistry& registry) {
  registry.add({.name = kTo,
                .family = "Reorder",
                .summary = "(N, C, H, W) -> channel-blocked (N, ceil(C/B), H, W, B), zero-padded "
                           "(oneDNN nChwBc, B 8 or 16)",
                .num_inputs = 1,
                .infer = infer_to_blocks,
                .reference = {"ref", to_blocks_reference},
                .fast = {"dnnl", to_blocks_dnnl, float32_input},
                .cost = copy_cost});
  registry.add({.name = kFrom,
                .family = "Reorder",
                .summary = "channel-blocked (N, C/B, H, W, B) -> (N, C, H, W)",
                .num_inputs = 1,
                .infer = infer_from_blocks,
                .reference = {"ref", from_blocks_reference},
                .fast = {"dnnl", from_blocks_dnnl, float32_input},
                .cost = copy_cost});
  registry.add({.name = kPack,
                .family = "Reorder",
                .summary = "OIHW conv weights -> a oneDNN blocked weight layout (folded when constant)",
                .num_inputs = 1,
                .traits = {.fold_when_constant = true},
                .infer = infer_pack,
                .reference = {"ref", pack_reference},
                .fast = {"dnnl", pack_dnnl, float32_input},
                .cost = copy_cost,
                .print = [](const OpDef&, const Attrs& attrs) {
                  return fmt::format("PackConvWeights{{{}}}", attrs.get_string("layout"));
                }});
}

}  // namespace tscope::ops
