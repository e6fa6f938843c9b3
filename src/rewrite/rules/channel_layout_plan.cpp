// SPDX-License-Identifier: Apache-2.0
// Layout assignment for use_channel_blocks: one walk in topological order that only reads the
// graph. A convolution that can run blocked starts a blocked value; pools and elementwise ops whose
// data inputs all have blocked values continue it, and so do a convolution's bias add and a mean
// over the spatial axes (a global average pool, whose readers then stay blocked too).
// A convolution (groups 1, or depthwise) whose channels fit no block runs blocked on zero-padded
// channels when padding costs at most half again (24 -> 32 on 16-channel blocks), reading a
// plain input through a ToChannelBlocks that zero-pads it; a padded depthwise convolution has one
// group per padded channel and reads a padded blocked value. Otherwise, a convolution (groups 1)
// that fits no block but has a bias add runs as a plain BlockedConv (layout "oihw"), to fuse the
// bias. Blocked and plain broadcasting agree on every axis but the channel axis, so an elementwise
// op runs blocked only when its data inputs share one static channel count and its other inputs are
// scalar constants (or it is a bias add, whose channel vector is rearranged into blocks).
// Convolutions whose weights are shared variables (a training step's) run blocked when their
// channels fit the block exactly (groups 1; padding needs constant weights), and so do the
// training step's ConvGradI, ConvGradW, batch norms and MaxPoolGrad when the values they read are
// blocked, so that activations and their gradients stay blocked through the forward and backward
// passes. An inference BatchNormInference on a blocked value runs blocked too, and so does a Join
// along the channel axis of blocked values that are whole blocks (DenseNet's concatenations).
#include "channel_layout_plan.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tscope/ops/channel_blocks.h"
#include "tscope/ops/shape.h"
#include "tscope/rewrite/pattern.h"

namespace tscope::rewrite::detail {
namespace {

bool is_float32_image(const Variable& value) {
  return value.dtype() == DType::Float32 && value.rank() == 4;
}

std::int64_t round_up(std::int64_t count, std::int64_t block) {
  return (count + block - 1) / block * block;
}

// Elementwise ops that keep zero-padded channels finite (the padding then meets zero weights in
// the next convolution: finite * 0 = 0), with finite scalar operands; the bounded sigmoid and tanh
// (SiLU, a squeeze-and-excitation's gate) too. log, division and the like could turn a padded 0
// into inf or NaN, which zero weights would not cancel.
bool keeps_padding_finite(std::string_view op_name) {
  return op_name == "Add" || op_name == "Sub" || op_name == "Mul" || op_name == "Maximum" ||
         op_name == "Minimum" || op_name == "Clip" || op_name == "Sigmoid" || op_name == "Tanh";
}

class LayoutAssigner {
 public:
  LayoutAssigner(const FunctionGraph& graph, std::int64_t block) : graph_(graph) {
    plan_.block = block;
  }

  LayoutPlan run() && {
    for (const ApplyNode* node : graph_.toposort()) {
      const std::string_view name = node->op().name;
      if (name == "Conv") {
        assign_conv(*node);
      } else if (name == "MaxPool" || name == "AveragePool") {
        assign_pool(*node);
      } else if (name == "Mean") {
        assign_spatial_mean(*node);
      } else if (name == "ConvGradI") {
        assign_conv_grad_inputs(*node);
      } else if (name == "ConvGradW") {
        assign_conv_grad_weights(*node);
      } else if (name == "BatchNormTrain" || name == "BatchNormGrad" ||
                 name == "BatchNormInference") {
        assign_batch_norm(*node);
      } else if (name == "Join") {
        assign_channel_join(*node);
      } else if (name == "MaxPoolGrad") {
        assign_max_pool_grad(*node);
      } else if (name == "Shape_i" || name == "Shape") {
        assign_shape_read(*node);
      } else if (node->op().traits.elementwise) {
        assign_elementwise(*node);
      }
    }
    return std::move(plan_);
  }

 private:
  // The bias vector when `value`'s only reader is an add of a channel vector of `out_channels`.
  std::optional<Variable> bias_after(const Variable& value, std::int64_t out_channels) const {
    if (!read_once(graph_, value)) return std::nullopt;
    const ApplyNode& add = *graph_.clients(value).front().node;
    if (add.op().name != "Add" || add.num_inputs() != 2) return std::nullopt;
    const Variable& other = add.input(0) == value ? add.input(1) : add.input(0);
    if (other == value) return std::nullopt;
    return channel_vector_of(other, out_channels);
  }

  // The channel count `count` is padded to on this block: itself when it fits, the next multiple
  // of the block when that adds at most half (24 -> 32 on 16; not 8 -> 16 or 17 -> 32), else none.
  [[nodiscard]] std::optional<std::int64_t> padded_count(std::int64_t count) const {
    if (count % plan_.block == 0) return count;
    const std::int64_t padded = round_up(count, plan_.block);
    if (2 * padded > 3 * count) return std::nullopt;
    return padded;
  }

  // How a groups-1 convolution that fits no block runs on padded channels, or nullopt when it
  // cannot: a bias add needs a constant bias to pad. Padded input channels come from a blocked
  // value with that padding (on one block, the same channel count pads the same way) or from a
  // plain value through ToChannelBlocks, which zero-pads.
  [[nodiscard]] std::optional<ConvLayout> padded_conv(const ApplyNode& conv,
                                                      std::int64_t channels,
                                                      std::int64_t out_channels) const {
    const std::optional<std::int64_t> out = padded_count(out_channels);
    // Input channels below the block run on plain input (OhwiBo).
    const std::optional<std::int64_t> in =
        channels < plan_.block ? channels : padded_count(channels);
    if (!out || !in) return std::nullopt;
    std::optional<std::string> layout = blocked_weight_layout(*in, *out, 1, plan_.block);
    if (!layout) return std::nullopt;
    if (*out != out_channels) {
      const std::optional<Variable> bias = bias_after(conv.output(0), out_channels);
      if (bias && bias->kind() != VariableKind::Constant) return std::nullopt;
    }
    const bool reads_blocked = input_runs_blocked(*layout);
    return ConvLayout{std::move(*layout), *in, *out, reads_blocked, 1};
  }

  // How a depthwise convolution (groups = channels = out_channels) that fits no block runs on
  // padded channels, one group per padded channel, or nullopt when it cannot: its input must be a
  // blocked value with that padding, and a bias add needs a constant bias to pad. The padded
  // groups see zero weights (and a zero bias), so the padded output channels are zeros whatever
  // finite values the padded input channels hold. oneDNN's blocked depthwise kernels take one
  // output channel per group only, so a channel multiplier stays plain.
  [[nodiscard]] std::optional<ConvLayout> padded_depthwise_conv(const ApplyNode& conv,
                                                                std::int64_t channels) const {
    const std::optional<std::int64_t> padded = padded_count(channels);
    const ValueLayout* input = plan_.blocked_layout(conv.input(0));
    if (!padded || input == nullptr || input->stored_channels != *padded) return std::nullopt;
    std::optional<std::string> layout =
        blocked_weight_layout(*padded, *padded, *padded, plan_.block);
    if (!layout) return std::nullopt;
    const std::optional<Variable> bias = bias_after(conv.output(0), channels);
    if (bias && bias->kind() != VariableKind::Constant) return std::nullopt;
    return ConvLayout{std::move(*layout), *padded, *padded, true, *padded};
  }

  void assign_conv(const ApplyNode& conv) {
    const Variable& x = conv.input(0);
    const Variable& w = conv.input(1);
    const bool constant = w.kind() == VariableKind::Constant;
    if (!is_float32_image(x) || w.rank() != 4 || w.dtype() != DType::Float32 ||
        (!constant && w.kind() != VariableKind::Shared)) {
      return;
    }
    const std::int64_t groups = conv.attrs().get_int("groups");
    const std::int64_t out_channels = w.type().dims[0];
    const std::int64_t channels = w.type().dims[1] * groups;
    const std::int64_t x_channels = x.type().dims[1];
    if (x_channels != kUnknownDim && x_channels != channels) return;  // the type rule's to report
    std::optional<ConvLayout> layout;
    if (!constant && groups != 1) return;
    if (std::optional<std::string> weights =
            blocked_weight_layout(channels, out_channels, groups, plan_.block)) {
      const bool reads_blocked = input_runs_blocked(*weights);
      layout = ConvLayout{std::move(*weights), channels, out_channels, reads_blocked, groups};
    } else if (!constant) {
      return;  // zero-padding the weights, or fusing a plain bias, wants constant weights
    } else if (groups == 1) {
      layout = padded_conv(conv, channels, out_channels);
    } else if (groups == channels && groups == out_channels) {
      layout = padded_depthwise_conv(conv, channels);
    }
    if (!layout) {
      // It stays on plain data but still takes its bias add (oneDNN's bias argument), which saves
      // a pass over its output. Only that: in oneDNN 2.6 the plain (gemm:jit) convolution applies
      // eltwise and binary post-ops in a slow generic loop, which costs far more than the separate
      // pass it would save.
      if (groups == 1 && bias_after(conv.output(0), out_channels)) {
        plan_.convs.emplace(
            &conv, ConvLayout{std::string(kPlainConvLayout), channels, out_channels, false, 1});
      }
      return;
    }
    plan_.values.emplace(conv.output(0).node(),
                         ValueLayout{plan_.block, out_channels, layout->out_channels});
    plan_.convs.emplace(&conv, std::move(*layout));
  }

  // The layout of `value` when it is blocked without padding and has `channels` channels.
  [[nodiscard]] const ValueLayout* exact_blocked(const Variable& value,
                                                 std::int64_t channels) const {
    const ValueLayout* layout = plan_.blocked_layout(value);
    if (layout == nullptr || layout->padded() || layout->channels != channels) return nullptr;
    return layout;
  }

  [[nodiscard]] bool fits_block(std::int64_t channels) const {
    return channels > 0 && channels % plan_.block == 0;
  }

  // ConvGradI(w, dy, x_shape) runs blocked when dy is blocked: dx comes out blocked.
  void assign_conv_grad_inputs(const ApplyNode& node) {
    const Variable& w = node.input(0);
    const Variable& dy = node.input(1);
    if (!is_float32_image(dy) || !is_float32_image(node.output(0)) || w.rank() != 4 ||
        w.dtype() != DType::Float32 || node.attrs().get_int("groups") != 1) {
      return;
    }
    const std::int64_t channels = w.type().dims[1];
    if (!fits_block(channels) || exact_blocked(dy, w.type().dims[0]) == nullptr) return;
    plan_.values.emplace(node.output(0).node(), ValueLayout{plan_.block, channels, channels});
    plan_.training_ops.emplace(&node, std::vector<int>{1});
  }

  // ConvGradW(x, dy, w_shape) runs blocked when dy is blocked, reading x blocked too, or plain
  // when it has fewer channels than a block (a first layer's image). dw stays plain.
  void assign_conv_grad_weights(const ApplyNode& node) {
    const Variable& x = node.input(0);
    const Variable& dy = node.input(1);
    const Dims& w = node.output(0).type().dims;
    if (!is_float32_image(x) || !is_float32_image(dy) || w.rank() != 4 ||
        node.attrs().get_int("groups") != 1 || exact_blocked(dy, w[0]) == nullptr) {
      return;
    }
    std::vector<int> blocked_inputs{1};
    if (fits_block(w[1])) {
      if (plan_.blocked_layout(x) != nullptr && exact_blocked(x, w[1]) == nullptr) return;
      blocked_inputs.push_back(0);
    } else if (w[1] <= 0 || w[1] >= plan_.block || plan_.blocked_layout(x) != nullptr) {
      return;
    }
    plan_.training_ops.emplace(&node, std::move(blocked_inputs));
  }

  // BatchNormTrain(x, ...), BatchNormGrad(x, dy, ...) and BatchNormInference(x, ...) run blocked
  // when x is: y and dx come out blocked, the per-channel outputs stay plain.
  void assign_batch_norm(const ApplyNode& node) {
    const Variable& x = node.input(0);
    if (!is_float32_image(x)) return;
    const ValueLayout* layout = exact_blocked(x, x.type().dims[1]);
    if (layout == nullptr) return;
    const bool grad = node.op().name == "BatchNormGrad";
    if (grad && !is_float32_image(node.input(1))) return;
    const ValueLayout same = *layout;
    plan_.values.emplace(node.output(0).node(), same);
    plan_.training_ops.emplace(&node, grad ? std::vector<int>{0, 1} : std::vector<int>{0});
  }

  // A Join along the channel axis of blocked values without padding (each a whole number of
  // blocks: DenseNet's concatenations of earlier features) is the Join along axis 1 of their
  // (N, C/B, H, W, B) blocked forms, so it runs blocked and its output is blocked.
  void assign_channel_join(const ApplyNode& node) {
    if (node.attrs().get_int("axis") != 1 || !is_float32_image(node.output(0))) return;
    std::int64_t channels = 0;
    for (const Variable& input : node.inputs()) {
      const std::int64_t count = input.type().dims[1];
      if (!is_float32_image(input) || count == kUnknownDim ||
          exact_blocked(input, count) == nullptr) {
        return;
      }
      channels += count;
    }
    plan_.values.emplace(node.output(0).node(), ValueLayout{plan_.block, channels, channels});
  }

  // MaxPoolGrad(x, dy) runs blocked when x is: dx comes out blocked.
  void assign_max_pool_grad(const ApplyNode& node) {
    const Variable& x = node.input(0);
    if (!is_float32_image(x) || !is_float32_image(node.input(1))) return;
    const ValueLayout* layout = exact_blocked(x, x.type().dims[1]);
    if (layout == nullptr) return;
    const ValueLayout same = *layout;
    plan_.values.emplace(node.output(0).node(), same);
    plan_.training_ops.emplace(&node, std::vector<int>{0, 1});
  }

  // Shape of a blocked value without padding, and Shape_i of its batch or spatial axis (the same
  // axis of the blocked shape), read the blocked value: a reorder just to read extents (as a
  // gradient's shape inputs do) would cost a pass over the data.
  void assign_shape_read(const ApplyNode& node) {
    const Variable& x = node.input(0);
    const ValueLayout* layout = plan_.blocked_layout(x);
    if (x.rank() != 4 || layout == nullptr) return;
    if (node.op().name == "Shape" ? layout->padded() : node.attrs().get_int("i") == 1) return;
    plan_.training_ops.emplace(&node, std::vector<int>{0});
  }

  // Whether an elementwise node's output of another dtype than float32 (a comparison's bool) can
  // stay blocked: only when every reader is an elementwise op whose other data inputs are blocked
  // already with the same channels, so that it never meets a reorder (which takes float32 only).
  [[nodiscard]] bool readers_stay_blocked(const Variable& value, const ValueLayout& layout) const {
    for (const Client& client : graph_.clients(value)) {
      if (client.is_output() || !client.node->op().traits.elementwise) return false;
      for (const Variable& input : client.node->inputs()) {
        if (input == value || scalar_constant_value(input)) continue;
        const ValueLayout* other = plan_.blocked_layout(input);
        if (other == nullptr || other->channels != layout.channels) return false;
      }
    }
    return true;
  }

  void assign_pool(const ApplyNode& pool) {
    const Variable& x = pool.input(0);
    const ValueLayout* layout = plan_.blocked_layout(x);
    if (!is_float32_image(x) || layout == nullptr) return;
    const ValueLayout same = *layout;  // copied before the map may rehash
    plan_.values.emplace(pool.output(0).node(), same);
  }

  // A mean over the spatial axes of a blocked value (a global average pool, the squeeze of a
  // squeeze-and-excitation block) runs on the blocked value: (N, C/B, H, W, B) averaged over H and
  // W is the blocked (N, C, 1, 1), which the pool's readers (the excitation's convolutions, its
  // multiply) then read blocked too. Padded channels average to finite values.
  void assign_spatial_mean(const ApplyNode& mean) {
    const Variable& x = mean.input(0);
    const ValueLayout* layout = plan_.blocked_layout(x);
    if (!is_float32_image(x) || layout == nullptr || mean.output(0).dtype() != DType::Float32) {
      return;
    }
    std::vector<std::int64_t> axes = mean.attrs().get_ints("axes");
    for (std::int64_t& axis : axes) axis = axis < 0 ? axis + 4 : axis;
    std::ranges::sort(axes);
    if (axes != std::vector<std::int64_t>{2, 3}) return;
    const ValueLayout same = *layout;  // copied before the map may rehash
    if (mean.attrs().get_bool_or("keepdims", false)) {
      plan_.values.emplace(mean.output(0).node(), same);
    } else {
      plan_.row_means.emplace(&mean, same);
    }
  }

  // The layout of `add`'s output when it adds a channel vector to a blocked convolution's output
  // that nothing else reads (the convolution's bias; padded_conv made sure a padded one is
  // constant).
  [[nodiscard]] const ValueLayout* bias_add_layout(const ApplyNode& add) const {
    if (add.op().name != "Add" || add.num_inputs() != 2) return nullptr;
    for (const Variable& input : add.inputs()) {
      const ApplyNode* conv = input.owner();
      const ValueLayout* layout = plan_.blocked_layout(input);
      if (conv != nullptr && layout != nullptr && plan_.convs.contains(conv) &&
          bias_after(input, layout->channels)) {
        return layout;
      }
    }
    return nullptr;
  }

  void assign_elementwise(const ApplyNode& node) {
    if (node.num_outputs() != 1 || node.output(0).rank() != 4) return;
    if (const ValueLayout* layout = bias_add_layout(node)) {
      const ValueLayout same = *layout;
      plan_.values.emplace(node.output(0).node(), same);
      return;
    }
    // On one block, the same channel count means the same padding.
    const ValueLayout* layout = nullptr;
    for (const Variable& input : node.inputs()) {
      if (scalar_constant_value(input)) continue;
      const ValueLayout* input_layout = plan_.blocked_layout(input);
      if (input_layout == nullptr || input.type().dims[1] == kUnknownDim) return;
      if (layout != nullptr && layout->channels != input_layout->channels) return;
      layout = input_layout;
    }
    if (layout == nullptr) return;
    if (layout->padded()) {
      if (!keeps_padding_finite(node.op().name)) return;
      for (const Variable& input : node.inputs()) {
        const std::optional<double> scalar = scalar_constant_value(input);
        if (scalar && !std::isfinite(*scalar)) return;
      }
    }
    if (node.output(0).dtype() != DType::Float32 &&
        !readers_stay_blocked(node.output(0), *layout)) {
      return;
    }
    const ValueLayout same = *layout;
    plan_.values.emplace(node.output(0).node(), same);
  }

  const FunctionGraph& graph_;
  LayoutPlan plan_;
};
}  // namespace

std::optional<double> scalar_constant_value(const Variable& value) {
  if (!is_scalar_constant(value)) return std::nullopt;
  return value.constant_value().to_doubles()[0];
}

std::optional<Variable> channel_vector_of(const Variable& value, std::int64_t channels) {
  const ApplyNode* shuffle = value.owner();
  if (shuffle == nullptr || shuffle->op().name != "DimShuffle") return std::nullopt;
  const std::vector<std::int64_t> channel_vector{kNewAxis, 0, kNewAxis, kNewAxis};
  const Variable& vector = shuffle->input(0);
  if (shuffle->attrs().get_ints("pattern") != channel_vector || vector.rank() != 1 ||
      vector.dtype() != DType::Float32 || vector.type().dims[0] != channels) {
    return std::nullopt;
  }
  return vector;
}

LayoutPlan assign_channel_layouts(const FunctionGraph& graph, std::int64_t block) {
  return LayoutAssigner(graph, block).run();
}

}  // namespace tscope::rewrite::detail
