// SPDX-License-Identifier: Apache-2.0
// The local rules that fold what follows a BlockedConv into its epilogue,
// y = clamp(conv + bias + residual, lower, upper), one oneDNN primitive instead of a pass over y
// per op. Each applies only where the convolution's output has no other reader, and only in the
// epilogue's order (bias, then residual, then lower and upper bound), so the fused node computes
// exactly what the nodes it replaces computed. The fused BlockedConv keeps the convolution's
// provenance: it is the user's convolution, and its profile row points at that line.
// A plain BlockedConv (layout "oihw", block 0) takes only its bias: oneDNN 2.6 runs other post-ops
// on plain convolutions in a slow generic loop (docs/conv.md).
// fuse_batch_norm_relu folds the ReLU after a BlockedBatchNormInference (DenseNet's
// pre-activation BatchNorm -> ReLU) into it the same way: one pass instead of two; and
// fuse_join_batch_norm lets it read the pieces of the blocked concatenation it normalises
// (DenseNet's Concat of every earlier layer's features) instead of the copy a Join makes.
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
Variable fused(const ApplyNode& conv,
               const Variable* extra,
               const std::string& attr,
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
std::optional<Variable> bias_vector_of(const Variable& value,
                                       std::int64_t block,
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
    const std::optional<Variable> bias = bias_vector_of(
        add.input(1 - i), conv->attrs().get_int("block"), conv->attrs().get_int("out_channels"));
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
// max(BlockedBatchNormInference(...), 0) -> BlockedBatchNormInference{relu}(...), when nothing
// else reads the norm's output. Only the bound 0: oneDNN fuses ReLU, not other clamps.
Replacements fuse_batch_norm_relu(const FunctionGraph& graph, ApplyNode& node) {
  static const OpDef& norm_op = op_def("BlockedBatchNormInference");
  if (node.num_inputs() != 2) return {};
  for (int i = 0; i < 2; ++i) {
    const ApplyNode* norm = producer_of(node.input(i), norm_op);
    const std::optional<double> bound = detail::scalar_constant_value(node.input(1 - i));
    if (norm == nullptr || !read_once(graph, node.input(i)) || !bound || *bound != 0.0 ||
        norm->attrs().get_bool_or("relu", false) ||
        !(node.output(0).type() == node.input(i).type())) {
      continue;
    }
    Attrs attrs = norm->attrs();
    attrs.set("relu", true);
    return {ApplyNode::create(norm_op, norm->inputs(), std::move(attrs), norm->provenance())
                ->output(0)};
  }
  return {};
}
// BlockedBatchNormInference(Join{1}(x1, x2, ...), gamma, beta, mean, var) ->
// BlockedBatchNormInference(x1, gamma, beta, mean, var, x2, ...), when nothing else reads the
// concatenation and the norm reads no pieces yet.
Replacements fuse_join_batch_norm(const FunctionGraph& graph, ApplyNode& norm) {
  static const OpDef& join_op = op_def("Join");
  if (norm.num_inputs() != 5) return {};
  const ApplyNode* join = producer_of(norm.input(0), join_op);
  if (join == nullptr || !read_once(graph, norm.input(0)) || join->attrs().get_int("axis") != 1 ||
      join->output(0).rank() != 5) {
    return {};
  }
  for (const Variable& piece : join->inputs()) {
    if (piece.dtype() != DType::Float32 || piece.rank() != 5) return {};
  }
  std::vector<Variable> inputs{join->input(0)};
  for (int i = 1; i < 5; ++i) inputs.push_back(norm.input(i));
  for (int i = 1; i < join->num_inputs(); ++i) inputs.push_back(join->input(i));
  return {
      ApplyNode::create(norm.op(), std::move(inputs), norm.attrs(), norm.provenance())->output(0)};
}
}  // namespace

LocalRule conv_bias_rule() { return {"fuse_conv_bias", {&op_def("Add")}, fuse_conv_bias}; }

LocalRule conv_residual_rule() {
  return {"fuse_conv_residual", {&op_def("Add")}, fuse_conv_residual};
}

LocalRule conv_clamp_rule() {
  return {"fuse_conv_clamp", {&op_def("Maximum"), &op_def("Minimum")}, fuse_conv_clamp};
}

LocalRule batch_norm_relu_rule() {
  return {"fuse_batch_norm_relu", {&op_def("Maximum")}, fuse_batch_norm_relu};
}

LocalRule join_batch_norm_rule() {
  return {"fuse_join_batch_norm", {&op_def("BlockedBatchNormInference")}, fuse_join_batch_norm};
}

std::vector<LocalRule> channel_block_fusion_rules() {
  return {conv_bias_rule(), conv_residual_rule(), conv_clamp_rule(), batch_norm_relu_rule(),
          join_batch_norm_rule()};
}

}  // namespace tscope::rewrite
