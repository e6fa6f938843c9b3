// SPDX-License-Identifier: Apache-2.0
// The local rules that fold what follows a BlockedConv into its epilogue,
// y = clamp(conv + bias + residual, lower, upper), one oneDNN primitive instead of a pass over y
// per op. Each applies only where the convolution's output has no other reader, and only in the
// epilogue's order (bias, then residual, then lower and upper bound), so the fused node computes
// exactly what the nodes it replaces computed. The fused BlockedConv keeps the convolution's
// provenance: it is the user's convolution, and its profile row points at that line.
// A plain BlockedConv (layout "oihw", block 0) takes only its bias: oneDNN 2.6 runs other post-ops
// on plain convolutions in a slow generic loop (docs/conv.md).
#include <cmath>
#include <optional>

#include "channel_layout_plan.h"
#include "tscope/ops/registry.h"
#include "tscope/rewrite/channel_block_rules.h"
#include "tscope/rewrite/pattern.h"

namespace tscope::rewrite {
namespace {

const OpDef& blocked_conv_op() {
  static const OpDef& op = op_def("BlockedConv");
  return op;
}

struct Epilogue {
  bool has_bias;
  bool has_residual;
  double lower;
  double upper;
  [[nodiscard]] bool has_clamp() const { return !std::isinf(lower) || !std::isinf(upper); }
};

Epilogue epilogue_of(const ApplyNode& conv) {
  const Attrs& attrs = conv.attrs();
  return {attrs.get_bool("has_bias"), attrs.get_bool_or("has_residual", false),
          attrs.get_double("lower"), attrs.get_double("upper")};
}

// The BlockedConv producing `value` when nothing else reads `value`.
const ApplyNode* fusable_conv(const FunctionGraph& graph, const Variable& value) {
  const ApplyNode* conv = producer_of(value, blocked_conv_op());
  return conv != nullptr && read_once(graph, value) ? conv : nullptr;
}

// `conv` with `extra` appended to its inputs and `attr` set (to true or a bound).
Variable fused(const ApplyNode& conv, const Variable* extra, const std::string& attr,
               AttrValue value) {
  std::vector<Variable> inputs = conv.inputs();
  if (extra != nullptr) inputs.push_back(*extra);
  Attrs attrs = conv.attrs();
  attrs.set(attr, std::move(value));
  return ApplyNode::create(blocked_conv_op(), std::move(inputs), std::move(attrs),
                           conv.provenance())
      ->output(0);
}

// The (C,) vector that `value` spreads over the channels of a BlockedConv output with `block`
// and `channels` (stored) channels: Reshape to (1, C/B, 1, 1, B) when blocked, DimShuffle to
// (1, C, 1, 1) when plain.
std::optional<Variable> bias_vector_of(const Variable& value, std::int64_t block,
                                       std::int64_t channels) {
  if (block == 0) return detail::channel_vector_of(value, channels);
  static const OpDef& reshape = op_def("Reshape");
  const ApplyNode* spread = producer_of(value, reshape);
  if (spread == nullptr || spread->num_inputs() != 1) return std::nullopt;
  const Variable& vector = spread->input(0);
  if (vector.rank() != 1 || vector.dtype() != DType::Float32 || vector.type().dims[0] != channels ||
      !(value.type().dims == Dims{1, channels / block, 1, 1, block})) {
    return std::nullopt;
  }
  return vector;
}

Replacements fuse_conv_bias(const FunctionGraph& graph, ApplyNode& add) {
  if (add.num_inputs() != 2) return {};
  for (int i = 0; i < 2; ++i) {
    const ApplyNode* conv = fusable_conv(graph, add.input(i));
    if (conv == nullptr) continue;
    const Epilogue epilogue = epilogue_of(*conv);
    if (epilogue.has_bias || epilogue.has_residual || epilogue.has_clamp()) continue;
    const std::optional<Variable> bias =
        bias_vector_of(add.input(1 - i), conv->attrs().get_int("block"),
                       conv->attrs().get_int("out_channels"));
    if (!bias) continue;
    return {fused(*conv, &*bias, "has_bias", true)};
  }
  return {};
}

Replacements fuse_conv_residual(const FunctionGraph& graph, ApplyNode& add) {
  if (add.num_inputs() != 2) return {};
  // The second operand first: when both are convolutions, it is the one computed last (the
  // topological order visits the first operand's inputs first), so the first is ready for it.
  for (const int i : {1, 0}) {
    const Variable& result = add.input(i);
    const Variable& residual = add.input(1 - i);
    const ApplyNode* conv = fusable_conv(graph, result);
    if (conv == nullptr || conv->attrs().get_int("block") == 0 || residual == result ||
        !(residual.type() == result.type())) {
      continue;
    }
    const Epilogue epilogue = epilogue_of(*conv);
    if (epilogue.has_residual || epilogue.has_clamp()) continue;
    return {fused(*conv, &residual, "has_residual", true)};
  }
  return {};
}

Replacements fuse_conv_clamp(const FunctionGraph& graph, ApplyNode& node) {
  static const OpDef& maximum = op_def("Maximum");
  if (node.num_inputs() != 2) return {};
  const bool raises = &node.op() == &maximum;
  for (int i = 0; i < 2; ++i) {
    const ApplyNode* conv = fusable_conv(graph, node.input(i));
    const std::optional<double> bound = detail::scalar_constant_value(node.input(1 - i));
    if (conv == nullptr || conv->attrs().get_int("block") == 0 || !bound || std::isnan(*bound) ||
        !(node.output(0).type() == node.input(i).type())) {
      continue;
    }
    const Epilogue epilogue = epilogue_of(*conv);
    if (!std::isinf(epilogue.upper) || (raises && !std::isinf(epilogue.lower))) continue;
    if (raises) return {fused(*conv, nullptr, "lower", *bound)};
    if (*bound >= epilogue.lower) return {fused(*conv, nullptr, "upper", *bound)};
  }
  return {};
}
}  // namespace

LocalRule conv_bias_rule() { return {"fuse_conv_bias", {&op_def("Add")}, fuse_conv_bias}; }

LocalRule conv_residual_rule() {
  return {"fuse_conv_residual", {&op_def("Add")}, fuse_conv_residual};
}

LocalRule conv_clamp_rule() {
  return {"fuse_conv_clamp", {&op_def("Maximum"), &op_def("Minimum")}, fuse_conv_clamp};
}

std::vector<LocalRule> channel_block_fusion_rules() {
  return {conv_bias_rule(), conv_residual_rule(), conv_clamp_rule()};
}

}  // namespace tscope::rewrite
