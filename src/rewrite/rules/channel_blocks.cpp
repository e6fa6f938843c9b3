// SPDX-License-Identifier: Apache-2.0
// One walk in topological order. A convolution that can run blocked starts a blocked value; pools
// and elementwise ops whose data inputs all have blocked values continue it; every other client
// of a value gets it back through FromChannelBlocks, created only where such a client exists.
// A convolution (groups 1) whose channels fit no block runs blocked on zero-padded channels when
// padding costs at most half again (24 -> 32 on 16-channel blocks): its constant weights and bias
// get zero rows and columns, so the padded channels hold zeros, and values with padded channels
// leave the layout through FromChannelBlocks and a slice back to the real channels. Otherwise, a
// convolution that fits no block but has a bias add becomes a BlockedConv on plain data (layout
// "oihw") with the bias fused.
// Blocked and plain broadcasting agree on every axis but the channel axis, so an elementwise op
// moves only when its data inputs share one static channel count and its other inputs are scalar
// constants.
#include "tscope/rewrite/channel_block_rules.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <source_location>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tscope/ops/channel_blocks.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope::rewrite {
namespace {

using Clients = std::unordered_map<const VariableNode*, std::vector<ApplyNode*>>;

Clients find_clients(const std::vector<ApplyNode*>& order) {
  Clients clients;
  for (ApplyNode* node : order) {
    for (const Variable& input : node->inputs()) clients[input.node()].push_back(node);
  }
  return clients;
}

std::optional<double> scalar_constant_value(const Variable& value) {
  if (value.kind() != VariableKind::Constant || value.constant_value().numel() != 1) {
    return std::nullopt;
  }
  return value.constant_value().to_doubles()[0];
}

bool is_float32_image(const Variable& value) {
  return value.dtype() == DType::Float32 && value.rank() == 4;
}

std::int64_t round_up(std::int64_t count, std::int64_t block) {
  return (count + block - 1) / block * block;
}

// `w` (O, C, kh, kw) as (out_channels, channels, kh, kw) with zeros in the added rows and columns.
Tensor zero_padded_weights(const Tensor& w, std::int64_t out_channels, std::int64_t channels) {
  const Dims& d = w.shape();
  Tensor padded = Tensor::zeros(DType::Float32, {out_channels, channels, d[2], d[3]});
  const Tensor source = w.contiguous();
  const float* from = source.data<float>();
  float* to = padded.data<float>();
  const std::int64_t taps = d[2] * d[3];
  for (std::int64_t o = 0; o < d[0]; ++o) {
    for (std::int64_t c = 0; c < d[1]; ++c) {
      std::copy_n(from + (o * d[1] + c) * taps, taps, to + (o * channels + c) * taps);
    }
  }
  return padded;
}

Tensor zero_padded_vector(const Tensor& v, std::int64_t length) {
  Tensor padded = Tensor::zeros(DType::Float32, {length});
  const Tensor source = v.contiguous();
  std::copy_n(source.data<float>(), v.numel(), padded.data<float>());
  return padded;
}

// Elementwise ops that keep zero-padded channels finite (the padding then meets zero weights in
// the next convolution: finite * 0 = 0), with finite scalar operands. log, division and the like
// could turn a padded 0 into inf or NaN, which zero weights would not cancel.
bool keeps_padding_finite(std::string_view op_name) {
  return op_name == "Add" || op_name == "Sub" || op_name == "Mul" || op_name == "Maximum" ||
         op_name == "Minimum" || op_name == "Clip";
}

// The block: `requested` when given, else the CPU's preferred block. A convolution whose channels
// do not fit the block runs on plain data: on MobileNet-v2, whose 24-channel layers cannot run on
// 16-channel blocks, 16 still beat 8 at one thread on an AVX-512 machine (9.8 against 11.0 ms per
// inference), as the other layers run oneDNN's AVX-512 kernels.
std::int64_t choose_block(std::int64_t requested) {
  if (requested == 0) return preferred_channel_block();
  if (!is_channel_block(requested)) {
    throw_error(ErrorKind::InvalidArgument, "use_channel_blocks: channel block {} (8 or 16)",
                requested);
  }
  return requested;
}

class ChannelBlocker {
 public:
  ChannelBlocker(FunctionGraph& graph, std::int64_t requested_block, bool winograd)
      : graph_(graph),
        order_(graph.toposort()),
        clients_(find_clients(order_)),
        block_(choose_block(requested_block)),
        // oneDNN 2.6's Winograd kernel is AVX-512 code on 16-channel blocks.
        winograd_(winograd && block_ == 16 && winograd_available()) {}

  std::int64_t run() {
    for (const Variable& output : graph_.outputs()) graph_outputs_.insert(output.node());
    for (ApplyNode* node : order_) {
      if (moved_.contains(node)) continue;
      const std::string_view name = node->op().name;
      if (name == "Conv") {
        move_conv(*node);
      } else if (name == "MaxPool" || name == "AveragePool") {
        move_pool(*node);
      } else if (node->op().traits.elementwise) {
        move_elementwise(*node);
      }
    }
    restore_plain_clients();
    // Clients that stayed (and graph outputs) read the fused plain convolutions' outputs; new
    // nodes already do (plain_value). Last results first, so that each replacement finds its
    // clients reachable from the outputs.
    for (auto it = plain_results_.rbegin(); it != plain_results_.rend(); ++it) {
      graph_.replace(it->first, it->second);
    }
    return changes_;
  }

 private:
  // The single client of `value` when it has exactly one and `value` is not a graph output.
  ApplyNode* only_client(const Variable& value) const {
    if (graph_outputs_.contains(value.node())) return nullptr;
    const auto found = clients_.find(value.node());
    if (found == clients_.end() || found->second.size() != 1) return nullptr;
    return found->second.front();
  }

  // `add`'s other input when it is a (1, O, 1, 1) broadcast of a float32 (O,) vector.
  static std::optional<Variable> bias_of(const ApplyNode& add, const Variable& conv_output,
                                         std::int64_t out_channels) {
    if (add.op().name != "Add" || add.num_inputs() != 2) return std::nullopt;
    const Variable& other = add.input(0) == conv_output ? add.input(1) : add.input(0);
    const ApplyNode* shuffle = other.owner();
    if (other == conv_output || shuffle == nullptr || shuffle->op().name != "DimShuffle") {
      return std::nullopt;
    }
    const std::vector<std::int64_t> channel_vector{kNewAxis, 0, kNewAxis, kNewAxis};
    const Variable& vector = shuffle->input(0);
    if (shuffle->attrs().get_ints("pattern") != channel_vector || vector.rank() != 1 ||
        vector.dtype() != DType::Float32 || vector.type().dims[0] != out_channels) {
      return std::nullopt;
    }
    return vector;
  }

  // `add`'s other input when it has a blocked value of `conv_output`'s exact static shape (a skip
  // connection): the convolution can add it as a post-op. Only values already blocked qualify,
  // so the residual is computed before the convolution that absorbs the add.
  std::optional<Variable> residual_of(const ApplyNode& add, const Variable& conv_output) const {
    if (add.op().name != "Add" || add.num_inputs() != 2) return std::nullopt;
    const Variable& other = add.input(0) == conv_output ? add.input(1) : add.input(0);
    if (other == conv_output || !has_blocked(other) ||
        !(other.type() == conv_output.type())) {
      return std::nullopt;
    }
    return blocked_.at(other.node());
  }

  // `node`'s bound when it is maximum / minimum of `value` and a scalar constant.
  static std::optional<double> bound_of(const ApplyNode& node, const Variable& value,
                                        std::string_view op_name) {
    if (node.op().name != op_name || node.num_inputs() != 2) return std::nullopt;
    const Variable& other = node.input(0) == value ? node.input(1) : node.input(0);
    if (other == value) return std::nullopt;
    const std::optional<double> bound = scalar_constant_value(other);
    if (!bound || std::isnan(*bound)) return std::nullopt;
    return bound;
  }

  // The channel count `count` is padded to on this block: itself when it fits, the next multiple
  // of the block when that adds at most half (24 -> 32 on 16; not 8 -> 16 or 17 -> 32), else none.
  [[nodiscard]] std::optional<std::int64_t> padded_count(std::int64_t count) const {
    if (count % block_ == 0) return count;
    const std::int64_t padded = round_up(count, block_);
    if (2 * padded > 3 * count) return std::nullopt;
    return padded;
  }

  // How a groups-1 convolution that fits no block runs on padded channels: its weights padded
  // (and its bias, when it has one and it is a constant), or nullopt when it cannot.
  struct PaddedConv {
    std::int64_t channels;
    std::int64_t out_channels;
    std::string layout;
  };
  [[nodiscard]] std::optional<PaddedConv> padded_conv(const ApplyNode& conv, std::int64_t channels,
                                                      std::int64_t out_channels) const {
    const Variable& x = conv.input(0);
    const std::optional<std::int64_t> out = padded_count(out_channels);
    // Input channels below the block run on plain input (OhwiBo); padded input channels must
    // come from a blocked value, which ToChannelBlocks cannot pad.
    std::optional<std::int64_t> in = channels < block_ ? channels : padded_count(channels);
    if (in && *in != channels && !has_blocked(x)) in.reset();
    if (!out || !in) return std::nullopt;
    const std::optional<std::string> layout = blocked_weight_layout(*in, *out, 1, block_);
    if (!layout) return std::nullopt;
    if (*out != out_channels) {
      const ApplyNode* next = only_client(conv.output(0));
      const std::optional<Variable> bias =
          next != nullptr ? bias_of(*next, conv.output(0), out_channels) : std::nullopt;
      if (bias && bias->kind() != VariableKind::Constant) return std::nullopt;
    }
    return PaddedConv{*in, *out, *layout};
  }

  void move_conv(ApplyNode& conv) {
    const Variable& x = conv.input(0);
    const Variable& w = conv.input(1);
    if (!is_float32_image(x) || w.kind() != VariableKind::Constant || w.rank() != 4 ||
        w.dtype() != DType::Float32) {
      return;
    }
    const std::int64_t groups = conv.attrs().get_int("groups");
    const std::int64_t out_channels = w.type().dims[0];
    const std::int64_t channels = w.type().dims[1] * groups;
    const std::int64_t x_channels = x.type().dims[1];
    if (x_channels != kUnknownDim && x_channels != channels) return;  // the type rule's to report
    std::optional<std::string> layout =
        blocked_weight_layout(channels, out_channels, groups, block_);
    // The channel counts the BlockedConv runs with (padded or not) and its weights.
    std::int64_t run_channels = channels;
    std::int64_t run_out_channels = out_channels;
    Variable weights = w;
    if (!layout && groups == 1) {
      if (const std::optional<PaddedConv> padded = padded_conv(conv, channels, out_channels)) {
        layout = padded->layout;
        run_channels = padded->channels;
        run_out_channels = padded->out_channels;
        weights = make_constant(
            zero_padded_weights(w.constant_value(), run_out_channels, run_channels),
            w.name() + "_padded", std::source_location::current());
      }
    }
    // A convolution whose channels fit no block (nor padding) stays on plain data but still takes
    // its bias add (oneDNN's bias argument), which saves a pass over its output. Only that: in
    // oneDNN 2.6 the plain (gemm:jit) convolution applies eltwise and binary post-ops in a slow
    // generic loop (MobileNet-v2's 24 -> 144 1x1 with its ReLU6 took 2.6 ms, against 0.25 ms for
    // the convolution alone), so clamps and residual adds stay separate nodes.
    const bool plain = !layout && groups == 1;
    if (plain) {
      const ApplyNode* next = only_client(conv.output(0));
      if (next == nullptr || !bias_of(*next, conv.output(0), out_channels)) return;
      layout = std::string(kPlainConvLayout);
    }
    if (!layout) return;
    const bool in_blocked = input_runs_blocked(*layout);

    std::vector<Variable> inputs{
        in_blocked ? blocked(x, conv.provenance()) : plain_value(x, conv.provenance()),
        plain ? w : packed_weights(weights, groups, *layout, conv.provenance())};

    // Absorb what follows: a bias add, a skip connection's add, then max(., lower) and / or
    // min(., upper).
    Variable result = conv.output(0);
    ApplyNode* next = only_client(result);
    if (next != nullptr) {
      if (std::optional<Variable> bias = bias_of(*next, result, out_channels)) {
        inputs.push_back(run_out_channels == out_channels
                             ? *bias
                             : make_constant(zero_padded_vector(bias->constant_value(),
                                                                run_out_channels),
                                             bias->name() + "_padded",
                                             std::source_location::current()));
        absorb(*next, result);
        next = only_client(result);
      }
    }
    BlockedConvEpilogue epilogue;
    epilogue.has_bias = inputs.size() == 3;
    if (plain) next = nullptr;
    if (next != nullptr) {
      if (std::optional<Variable> residual = residual_of(*next, result)) {
        inputs.push_back(*residual);
        epilogue.has_residual = true;
        absorb(*next, result);
        next = only_client(result);
      }
    }
    if (next != nullptr) {
      if (std::optional<double> bound = bound_of(*next, result, "Maximum")) {
        epilogue.lower = *bound;
        absorb(*next, result);
        next = only_client(result);
      }
    }
    if (next != nullptr) {
      if (std::optional<double> bound = bound_of(*next, result, "Minimum");
          bound && *bound >= epilogue.lower) {
        epilogue.upper = *bound;
        absorb(*next, result);
      }
    }
    Attrs attrs =
        blocked_conv_attrs(conv.attrs(), *layout, run_channels, run_out_channels, epilogue);
    if (winograd_ && suits_winograd(attrs, w.type().dims[2], w.type().dims[3])) {
      attrs.set("winograd", true);
    }
    const auto blocked_conv =
        ApplyNode::create(op_def("BlockedConv"), std::move(inputs), std::move(attrs),
                          conv.provenance());
    if (plain) {
      fused_.emplace(result.node(), blocked_conv->output(0));
      plain_results_.emplace_back(result, blocked_conv->output(0));
      moved_.insert(&conv);
      ++changes_;
    } else {
      record(result, blocked_conv->output(0));
      if (run_out_channels != out_channels) padded_.emplace(result.node(), out_channels);
    }
  }

  void move_pool(ApplyNode& pool) {
    const Variable& x = pool.input(0);
    if (!is_float32_image(x) || !has_blocked(x)) return;
    Attrs attrs = pool.attrs();
    attrs.set("block", block_);
    const std::string_view name = pool.op().name == "MaxPool" ? "BlockedMaxPool" : "BlockedAvgPool";
    const auto blocked_pool = ApplyNode::create(op_def(name), {blocked(x, pool.provenance())},
                                                std::move(attrs), pool.provenance());
    record(pool.output(0), blocked_pool->output(0));
    if (const auto found = padded_.find(x.node()); found != padded_.end()) {
      padded_.emplace(pool.output(0).node(), found->second);
    }
  }

  void move_elementwise(ApplyNode& node) {
    if (node.num_outputs() != 1 || !is_float32_image(node.output(0))) return;
    std::optional<std::int64_t> channels;
    for (const Variable& input : node.inputs()) {
      if (scalar_constant_value(input)) continue;
      if (!has_blocked(input) || input.type().dims[1] == kUnknownDim) return;
      if (channels && *channels != input.type().dims[1]) return;
      channels = input.type().dims[1];
    }
    if (!channels) return;
    bool padded = false;
    for (const Variable& input : node.inputs()) padded = padded || padded_.contains(input.node());
    if (padded) {
      if (!keeps_padding_finite(node.op().name)) return;
      for (const Variable& input : node.inputs()) {
        const std::optional<double> scalar = scalar_constant_value(input);
        if (scalar && !std::isfinite(*scalar)) return;
      }
    }
    std::vector<Variable> inputs;
    for (const Variable& input : node.inputs()) {
      const std::optional<double> scalar = scalar_constant_value(input);
      // A rank-0 scalar broadcasts against the rank-5 blocked tensor as it did against rank 4.
      inputs.push_back(scalar ? make_constant(Tensor::scalar(*scalar, input.dtype()), input.name(),
                                              std::source_location::current())
                              : blocked(input, node.provenance()));
    }
    const auto moved =
        ApplyNode::create(node.op(), std::move(inputs), node.attrs(), node.provenance());
    record(node.output(0), moved->output(0));
    if (padded) padded_.emplace(node.output(0).node(), *channels);
  }

  [[nodiscard]] bool has_blocked(const Variable& value) const {
    return blocked_.contains(value.node());
  }

  // The blocked value of `value`, entering the layout through ToChannelBlocks when it has none.
  Variable blocked(const Variable& value, const Provenance& provenance) {
    if (const auto found = blocked_.find(value.node()); found != blocked_.end()) {
      return found->second;
    }
    const auto reorder = ApplyNode::create(op_def("ToChannelBlocks"),
                                           {plain_value(value, provenance)},
                                           Attrs{{"block", block_}}, provenance);
    blocked_.emplace(value.node(), reorder->output(0));
    return reorder->output(0);
  }

  // What a new node reads for plain `value`: the output of the fused plain convolution that
  // replaces it, or a FromChannelBlocks of its blocked value (one per value, shared with
  // restore_plain_clients), or `value` itself. New nodes are not reachable from the outputs
  // while the walk runs, so replace() could not rewire them later.
  Variable plain_value(const Variable& value, const Provenance& provenance) {
    if (const auto fused = fused_.find(value.node()); fused != fused_.end()) return fused->second;
    const auto found = blocked_.find(value.node());
    if (found == blocked_.end()) return value;
    if (const auto restored = restored_.find(value.node()); restored != restored_.end()) {
      return restored->second;
    }
    const auto reorder = ApplyNode::create(op_def("FromChannelBlocks"), {found->second},
                                           Attrs{{"block", block_}}, provenance);
    Variable restored = reorder->output(0);
    if (const auto padded = padded_.find(value.node()); padded != padded_.end()) {
      // The real channels: a view of the first ones.
      const ProvenanceScope scope(provenance, true);
      restored = subtensor(restored, {slice(), slice(0, padded->second)});
    }
    restored_.emplace(value.node(), restored);
    return restored;
  }

  Variable packed_weights(const Variable& w, std::int64_t groups, const std::string& layout,
                          const Provenance& provenance) {
    const auto pack = ApplyNode::create(
        op_def("PackConvWeights"), {w},
        Attrs{{"block", block_}, {"groups", groups}, {"layout", layout}}, provenance);
    return pack->output(0);
  }

  void absorb(ApplyNode& node, Variable& result) {
    moved_.insert(&node);
    result = node.output(0);
    ++changes_;
  }

  void record(const Variable& plain, const Variable& blocked_value) {
    blocked_.emplace(plain.node(), blocked_value);
    moved_plain_.push_back(plain);
    if (const ApplyNode* owner = plain.owner()) moved_.insert(owner);
    ++changes_;
  }

  // Clients that stayed on plain data (and graph outputs) read a FromChannelBlocks of the value.
  void restore_plain_clients() {
    for (const Variable& plain : moved_plain_) {
      bool needed = graph_outputs_.contains(plain.node());
      if (const auto found = clients_.find(plain.node()); found != clients_.end()) {
        for (const ApplyNode* client : found->second) needed = needed || !moved_.contains(client);
      }
      if (!needed) continue;
      graph_.replace(plain, plain_value(plain, plain.owner()->provenance()));
    }
  }

  FunctionGraph& graph_;
  std::vector<ApplyNode*> order_;
  Clients clients_;
  std::int64_t block_;
  bool winograd_;
  std::unordered_set<const VariableNode*> graph_outputs_;
  std::unordered_map<const VariableNode*, Variable> blocked_;
  std::unordered_set<const ApplyNode*> moved_;
  std::vector<Variable> moved_plain_;
  // (last absorbed result, fused plain convolution's output), replaced at the end of the walk.
  std::vector<std::pair<Variable, Variable>> plain_results_;
  std::unordered_map<const VariableNode*, Variable> fused_;     // the same, by result
  std::unordered_map<const VariableNode*, Variable> restored_;  // FromChannelBlocks per value
  // Blocked values with zero-padded channels: their real channel count, by plain value.
  std::unordered_map<const VariableNode*, std::int64_t> padded_;
  std::int64_t changes_ = 0;
};
}  // namespace

std::int64_t use_channel_blocks(FunctionGraph& graph, std::int64_t block, bool winograd) {
  return ChannelBlocker(graph, block, winograd).run();
}

}  // namespace tscope::rewrite
