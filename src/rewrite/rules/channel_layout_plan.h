// SPDX-License-Identifier: Apache-2.0
// The data shared by the two parts of use_channel_blocks: layout assignment
// (channel_layout_plan.cpp) decides, in one read-only sweep, which values are stored in channel
// blocks and how each convolution runs; materialisation (channel_blocks.cpp) rewrites the graph to
// match, with a reorder wherever a reader needs the other layout.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tscope/graph/function_graph.h"

namespace tscope::rewrite::detail {

/// How a value is stored: plain (block 0), or in blocks of `block` channels holding
/// `stored_channels`, of which the first `channels` are real. The others are zero padding a
/// narrow convolution added; they hold finite values that the next convolution's zero weights
/// cancel, and a slice drops them where the value leaves the layout.
struct ValueLayout {
  std::int64_t block = 0;
  std::int64_t channels = 0;
  std::int64_t stored_channels = 0;
  [[nodiscard]] bool blocked() const { return block != 0; }
  [[nodiscard]] bool padded() const { return stored_channels != channels; }
};

/// How a Conv runs as a BlockedConv: its weight layout (blocked_weight_layout's name, or
/// kPlainConvLayout for a plain BlockedConv that fuses its bias add) and the channel counts it runs
/// with, zero-padded where they exceed the weights'.
struct ConvLayout {
  std::string weights;
  std::int64_t channels = 0;
  std::int64_t out_channels = 0;
  bool reads_blocked_input = false;  ///< input_runs_blocked(weights)
  /// The group count it runs with: the Conv's, except for a depthwise convolution on padded
  /// channels, whose padded channels are groups too.
  std::int64_t groups = 1;
};

struct LayoutPlan {
  std::int64_t block = 0;
  /// Blocked values (outputs of the nodes that run blocked); every other value stays plain.
  std::unordered_map<const VariableNode*, ValueLayout> values;
  /// The Conv nodes that become BlockedConv.
  std::unordered_map<const ApplyNode*, ConvLayout> convs;
  /// The training-step ops that run blocked (ConvGradI, ConvGradW, BatchNormTrain, BatchNormGrad,
  /// MaxPoolGrad become their Blocked forms, and so does BatchNormInference; a Shape_i of a batch
  /// or spatial axis reads the blocked value), each with the indices of the inputs it reads
  /// blocked.
  std::unordered_map<const ApplyNode*, std::vector<int>> training_ops;
  /// Means over the spatial axes of blocked values that drop those axes (a global average pool
  /// flattened in one node), with the layout of the value each reads: each runs on the blocked
  /// value, whose pooled (N, C/B, 1, 1, B) result holds the channels in order, so the (N, C)
  /// output is a view of it.
  std::unordered_map<const ApplyNode*, ValueLayout> row_means;

  [[nodiscard]] const ValueLayout* blocked_layout(const Variable& value) const {
    const auto found = values.find(value.node());
    return found == values.end() ? nullptr : &found->second;
  }
};

/// Decides the layout of every value of `graph` on blocks of `block` channels (8 or 16). Reads the
/// graph only.
[[nodiscard]] LayoutPlan assign_channel_layouts(const FunctionGraph& graph, std::int64_t block);

/// The float32 vector a (1, C, 1, 1) DimShuffle of which `value` is (a convolution's bias as
/// written), when it is one with `channels` entries.
[[nodiscard]] std::optional<Variable> channel_vector_of(const Variable& value,
                                                        std::int64_t channels);

/// The value of a constant holding one element.
[[nodiscard]] std::optional<double> scalar_constant_value(const Variable& value);

}  // namespace tscope::rewrite::detail
