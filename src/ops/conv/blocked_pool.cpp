// SPDX-License-Identifier: Apache-2.0
// BlockedMaxPool and BlockedAvgPool: MaxPool and AveragePool on channel-blocked data
// (channel_blocks.h), with the plain ops' attrs plus "block". oneDNN's plain-layout max pooling is
// a slow generic loop, an order of magnitude behind its blocked kernel. The reference kernels
// are the plain ops' reference kernels between unblocking and blocking. Inference only.
#include <fmt/format.h>

#include "channel_blocks.h"
#include "pool_dnnl.h"
#include "pool_geometry.h"
#include "reference_loops.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
struct PoolFlavour {
  std::string_view name;       ///< "BlockedMaxPool"
  std::string_view plain_op;   ///< "MaxPool"
  std::string_view base;       ///< the printed name's base, as the plain op's
};
constexpr PoolFlavour kMax{"BlockedMaxPool", "MaxPool", "MaxPool"};
constexpr PoolFlavour kAverage{"BlockedAvgPool", "AveragePool", "AveragePool"};

const PoolFlavour& flavour_of(std::string_view op_name) {
  return op_name == kMax.name ? kMax : kAverage;
}

detail::PoolKind pool_kind(const PoolFlavour& flavour, const Attrs& attrs) {
  if (flavour.name == kMax.name) return detail::PoolKind::Max;
  return attrs.get_bool("include_pad") ? detail::PoolKind::AverageIncludePad
                                       : detail::PoolKind::AverageExcludePad;
}

Dims plain_input(const Dims& blocked, std::int64_t block, std::string_view label) {
  detail::check_blocked_dims(blocked, block, label);
  return detail::plain_shape(blocked);
}

std::vector<Type> infer_blocked_pool(const InferContext& ctx) {
  const std::string_view label = ctx.op.name;
  if (ctx.input_type(0).dtype != DType::Float32) {
    throw_error(ErrorKind::TypeMismatch, "{}: expects float32, got {}", label,
                dtype_name(ctx.input_type(0).dtype));
  }
  const std::int64_t block = detail::check_block_attr(ctx.attrs, label);
  const detail::PoolGeometry g =
      detail::pool_geometry(ctx.attrs, plain_input(ctx.input_type(0).dims, block, label), label);
  return {Type{DType::Float32, detail::blocked_shape(g.output_shape(), block, label)}};
}

detail::PoolGeometry kernel_geometry(const KernelContext& ctx) {
  const std::string_view label = ctx.node->op().name;
  const std::int64_t block = detail::check_block_attr(*ctx.attrs, label);
  return detail::pool_geometry(*ctx.attrs, plain_input(ctx.input(0).shape(), block, label), label);
}

void compute_reference(KernelContext& ctx) {
  const PoolFlavour& flavour = flavour_of(ctx.node->op().name);
  const detail::PoolGeometry g = kernel_geometry(ctx);
  const Tensor plain_y = detail::run_plain_reference(ctx, flavour.plain_op, *ctx.attrs,
                                                     {detail::unblock(ctx.input(0))})[0];
  Tensor& y = ctx.allocate_output(
      0, DType::Float32,
      detail::blocked_shape(g.output_shape(), ctx.attrs->get_int("block"), flavour.name));
  detail::block_into(plain_y, y);
}

void compute_dnnl(KernelContext& ctx) {
  const PoolFlavour& flavour = flavour_of(ctx.node->op().name);
  const detail::PoolGeometry g = kernel_geometry(ctx);
  const Tensor x = ctx.input(0).contiguous();
  const std::int64_t block = ctx.attrs->get_int("block");
  Tensor& y = ctx.allocate_output(0, DType::Float32,
                                  detail::blocked_shape(g.output_shape(), block, flavour.name));
  if (y.numel() == 0 ||
      !detail::run_pool_forward_dnnl(ctx, pool_kind(flavour, *ctx.attrs), g, x, y, block)) {
    compute_reference(ctx);
  }
}

Cost blocked_pool_cost(const CostContext& ctx) {
  const double elements = static_cast<double>(ctx.input_shapes[0].product() +
                                              ctx.output_shapes[0].product());
  return Cost{detail::pool_flops(detail::plain_shape(ctx.output_shapes[0]), ctx.attrs),
              elements * 4.0};
}

std::string print_blocked_pool(const OpDef& op, const Attrs& attrs) {
  std::string name = detail::pool_printed_name(flavour_of(op.name).base, "", attrs);
  name.pop_back();
  return name + fmt::format(",nChw{}c}}", attrs.get_int("block"));
}

bool float32_input(std::span<const Variable> inputs, const Attrs&) {
  return detail::inputs_are_float32(inputs, {0});
}

OpDef blocked_pool_def(const PoolFlavour& flavour, std::string_view summary) {
  return {.name = flavour.name,
          .family = flavour.plain_op,
          .summary = summary,
          .num_inputs = 1,
          .infer = infer_blocked_pool,
          .reference = {"ref", compute_reference},
          .fast = {"dnnl", compute_dnnl, float32_input},
          .cost = blocked_pool_cost,
          .print = print_blocked_pool};
}
}  // namespace

void register_blocked_pools(OpRegistry& registry) {
  registry.add(blocked_pool_def(kMax, "MaxPool on channel-blocked (N, C/B, H, W, B) data (inference)"));
  registry.add(blocked_pool_def(
      kAverage, "AveragePool on channel-blocked (N, C/B, H, W, B) data (inference)"));
}

}  // namespace tscope::ops
