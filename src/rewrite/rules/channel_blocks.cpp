// SPDX-License-Identifier: Apache-2.0
// use_channel_blocks: layout assignment (channel_layout_plan.cpp) decides which values run
// blocked; this file materialises that plan. In topological order, each node that runs blocked is
// rebuilt on the blocked values of its inputs. Where a graph output or a reader that stays plain
// reads the node's output, that output is replaced by a FromChannelBlocks of the new node (and a
// slice to the real channels when they are padded); where every reader runs blocked, the readers
// take the new node's output when they are rebuilt, and replace() removes the old node after the
// last of them. Reorders therefore sit exactly where a blocked value meets a plain reader, and
// ToChannelBlocks where a convolution that reads blocked input meets plain data. The bias adds,
// skip connections and clamps stay separate nodes here; the local rules in
// channel_block_fusions.cpp fold them into the convolutions. A convolution whose weights are not
// constant reads them through a PackConvWeights node, which then runs on every call. The training
// ops the plan moves become their Blocked forms, reading blocked only the inputs the plan names.
// A spatial mean becomes the same mean over the blocked value's spatial axes.
#include "tscope/ops/channel_blocks.h"

#include <algorithm>
#include <source_location>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "channel_layout_plan.h"
#include "tscope/core/error.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"
#include "tscope/rewrite/channel_block_rules.h"

namespace tscope::rewrite {
namespace {
using detail::ConvLayout;
using detail::LayoutPlan;
using detail::ValueLayout;

// `w` (O, C / groups, kh, kw) as (out_channels, channels, kh, kw) with zeros in the added rows and
// columns; `channels` counts a group's input channels (1 for a depthwise convolution).
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

// The block: `requested` when given, else the CPU's preferred block. A convolution whose channels
// do not fit the block runs on plain data (or padded): 16 beats 8 on an AVX-512 machine even for
// models with such layers, as the other layers then run oneDNN's AVX-512 kernels.
std::int64_t choose_block(std::int64_t requested) {
  if (requested == 0) return preferred_channel_block();
  if (!is_channel_block(requested)) {
    throw_error(ErrorKind::InvalidArgument, "use_channel_blocks: channel block {} (8 or 16)",
                requested);
  }
  return requested;
}

class Materialiser {
 public:
  Materialiser(FunctionGraph& graph, const LayoutPlan& plan, bool winograd)
      : graph_(graph),
        plan_(plan),
        // oneDNN 2.6's Winograd kernel is AVX-512 code on 16-channel blocks.
        winograd_(winograd && plan.block == 16 && winograd_available()) {}

  std::int64_t run() {
    std::int64_t changes = 0;
    for (ApplyNode* node : graph_.toposort()) {
      if (const auto training = plan_.training_ops.find(node);
          training != plan_.training_ops.end()) {
        rebuild_training_op(*node, training->second);
      } else if (const auto conv = plan_.convs.find(node); conv != plan_.convs.end()) {
        rebuild_conv(*node, conv->second);
      } else if (const auto mean = plan_.row_means.find(node); mean != plan_.row_means.end()) {
        rebuild_row_mean(*node, mean->second);
      } else if (const ValueLayout* layout = blocked_output(*node)) {
        const std::string_view name = node->op().name;
        if (name == "MaxPool" || name == "AveragePool") {
          rebuild_pool(*node, *layout);
        } else if (name == "Mean") {
          restore(node->output(0), blocked_spatial_mean(*node), *layout, node->provenance());
        } else if (name == "Join") {
          rebuild_join(*node, *layout);
        } else {
          rebuild_elementwise(*node, *layout);
        }
      } else {
        continue;
      }
      ++changes;
    }
    return changes;
  }

 private:
  [[nodiscard]] const ValueLayout* blocked_output(const ApplyNode& node) const {
    return node.num_outputs() == 1 ? plan_.blocked_layout(node.output(0)) : nullptr;
  }

  // The blocked value of `value`: the one it was restored from, or a ToChannelBlocks of it (one
  // per value) when it is plain.
  Variable blocked(const Variable& value, const Provenance& provenance) {
    if (const auto found = blocked_of_.find(value.node()); found != blocked_of_.end()) {
      return found->second;
    }
    const auto reorder = ApplyNode::create(op_def("ToChannelBlocks"), {value},
                                           Attrs{{"block", plan_.block}}, provenance);
    blocked_of_.emplace(value.node(), reorder->output(0));
    return reorder->output(0);
  }

  // Whether `client` reads its input blocked once rebuilt.
  [[nodiscard]] bool reads_blocked(const Client& client) const {
    const ApplyNode& reader = *client.node;
    if (const auto training = plan_.training_ops.find(&reader);
        training != plan_.training_ops.end()) {
      return std::ranges::find(training->second, client.index) != training->second.end();
    }
    if (const auto conv = plan_.convs.find(&reader); conv != plan_.convs.end()) {
      return conv->second.reads_blocked_input;
    }
    return blocked_output(reader) != nullptr || plan_.row_means.contains(&reader);
  }

  // Whether a graph output or a reader that stays plain reads `value`.
  [[nodiscard]] bool has_plain_reader(const Variable& value) const {
    return std::ranges::any_of(graph_.clients(value), [&](const Client& client) {
      return client.is_output() || !reads_blocked(client);
    });
  }

  // Makes `blocked_value` the blocked value of `plain`. When something reads `plain` as plain
  // data, `plain` is replaced by the plain data of `blocked_value` (laid out as `layout` says);
  // otherwise its readers, all rebuilt later in the walk, take `blocked_value` and the old node
  // leaves the graph with the last of them.
  void restore(const Variable& plain,
               const Variable& blocked_value,
               const ValueLayout& layout,
               const Provenance& provenance) {
    if (!has_plain_reader(plain)) {
      blocked_of_.emplace(plain.node(), blocked_value);
      return;
    }
    const auto reorder = ApplyNode::create(op_def("FromChannelBlocks"), {blocked_value},
                                           Attrs{{"block", plan_.block}}, provenance);
    Variable restored = reorder->output(0);
    if (layout.padded()) {
      // The real channels: a view of the first ones.
      const ProvenanceScope scope(provenance, true);
      restored = subtensor(restored, {slice(), slice(0, layout.channels)});
    }
    blocked_of_.emplace(restored.node(), blocked_value);
    graph_.replace(plain, restored);
  }

  void rebuild_conv(const ApplyNode& conv, const ConvLayout& layout) {
    const Variable& x = conv.input(0);
    const Variable& w = conv.input(1);
    const Provenance& provenance = conv.provenance();
    Attrs conv_attrs = conv.attrs();
    conv_attrs.set("groups", layout.groups);
    const Attrs attrs_base =
        blocked_conv_attrs(conv_attrs, layout.weights, layout.channels, layout.out_channels);
    if (layout.weights == kPlainConvLayout) {
      const auto plain_conv =
          ApplyNode::create(op_def("BlockedConv"), {x, w}, attrs_base, provenance);
      graph_.replace(conv.output(0), plain_conv->output(0));
      return;
    }
    const std::int64_t groups = layout.groups;
    Variable weights = w;
    if (layout.out_channels != w.type().dims[0] || layout.channels != w.type().dims[1] * groups) {
      weights = make_constant(
          zero_padded_weights(w.constant_value(), layout.out_channels, layout.channels / groups),
          w.name() + "_padded", std::source_location::current());
    }
    const auto packed = ApplyNode::create(
        op_def("PackConvWeights"), {weights},
        Attrs{{"block", plan_.block}, {"groups", groups}, {"layout", layout.weights}}, provenance);
    Attrs attrs = attrs_base;
    const Dims& out_dims = conv.output(0).type().dims;
    // Constant weights are transformed once; others (a training step's) within every call.
    if (winograd_ && suits_winograd(attrs, w.type().dims[2], w.type().dims[3]) &&
        winograd_pays_off(out_dims[2], out_dims[3], layout.channels)) {
      attrs.set("winograd", true);
    }
    const auto blocked_conv = ApplyNode::create(
        op_def("BlockedConv"),
        {layout.reads_blocked_input ? blocked(x, provenance) : x, packed->output(0)},
        std::move(attrs), provenance);
    restore(conv.output(0), blocked_conv->output(0), *plan_.blocked_layout(conv.output(0)),
            provenance);
  }

  // What Shape or Shape_i `node` reads of its input, from the input's blocked value: Shape_i of
  // the same (batch or spatial) axis, or the blocked shape's first four extents with the channel
  // blocks times the block.
  Variable plain_extents(const ApplyNode& node, const Variable& blocked_value) {
    const ProvenanceScope scope(node.provenance(), true);
    if (node.op().name == "Shape_i") return shape_i(blocked_value, node.attrs().get_int("i"));
    const Tensor factors = Tensor::from_vector<std::int64_t>({4}, {1, plan_.block, 1, 1});
    return subtensor(shape(blocked_value), {slice(0, 4)}) *
           make_constant(factors, "channel_block_factors", std::source_location::current());
  }

  // ConvGradI, ConvGradW, BatchNormTrain, BatchNormGrad or MaxPoolGrad as its Blocked form, reading
  // the inputs listed in `blocked_inputs` blocked; its blocked outputs are restored, the others
  // replaced. A Shape or Shape_i reads the extents of the blocked value (plain_extents).
  void rebuild_training_op(const ApplyNode& node, const std::vector<int>& blocked_inputs) {
    const Provenance& provenance = node.provenance();
    std::vector<Variable> inputs;
    for (int i = 0; i < node.num_inputs(); ++i) {
      const bool read_blocked = std::ranges::find(blocked_inputs, i) != blocked_inputs.end();
      inputs.push_back(read_blocked ? blocked(node.input(i), provenance) : node.input(i));
    }
    if (node.op().name == "Shape_i" || node.op().name == "Shape") {
      graph_.replace(node.output(0), plain_extents(node, inputs[0]));
      return;
    }
    Attrs attrs = node.attrs();
    attrs.set("block", plan_.block);
    if (node.op().name == "ConvGradW") {
      attrs.set("in_blocked", std::ranges::find(blocked_inputs, 0) != blocked_inputs.end());
    }
    if (gradient_runs_winograd(node, attrs)) attrs.set("winograd", true);
    const auto moved = ApplyNode::create(op_def("Blocked" + std::string(node.op().name)),
                                         std::move(inputs), std::move(attrs), provenance);
    for (int i = 0; i < node.num_outputs(); ++i) {
      if (const ValueLayout* layout = plan_.blocked_layout(node.output(i))) {
        restore(node.output(i), moved->output(i), *layout, provenance);
      } else {
        graph_.replace(node.output(i), moved->output(i));
      }
    }
  }

  // Whether a ConvGradI or ConvGradW moved onto blocks (`attrs`: its blocked form's) runs
  // Winograd, by the forward convolution's rule: blocked x and dy, and the window and sizes for
  // which Winograd pays off. Its weights change every step, so each call transforms them.
  bool gradient_runs_winograd(const ApplyNode& node, const Attrs& attrs) const {
    const bool grad_inputs = node.op().name == "ConvGradI";
    if (!winograd_ || (!grad_inputs && node.op().name != "ConvGradW")) return false;
    if (!grad_inputs && !attrs.get_bool("in_blocked")) return false;
    // The weights: ConvGradI's input, ConvGradW's output.
    const Dims& w = grad_inputs ? node.input(0).type().dims : node.output(0).type().dims;
    const Dims& dy = node.input(1).type().dims;
    return w.rank() == 4 && dy.rank() == 4 &&
           suits_winograd_window(attrs, plan_.block, w[2], w[3]) &&
           winograd_pays_off(dy[2], dy[3], w[1]);
  }

  void rebuild_pool(const ApplyNode& pool, const ValueLayout& layout) {
    Attrs attrs = pool.attrs();
    attrs.set("block", plan_.block);
    const std::string_view name = pool.op().name == "MaxPool" ? "BlockedMaxPool" : "BlockedAvgPool";
    const auto blocked_pool =
        ApplyNode::create(op_def(name), {blocked(pool.input(0), pool.provenance())},
                          std::move(attrs), pool.provenance());
    restore(pool.output(0), blocked_pool->output(0), layout, pool.provenance());
  }

  // A Join along the channel axis as the Join along axis 1 (the channel blocks) of the blocked
  // inputs, all of them whole blocks.
  void rebuild_join(const ApplyNode& join, const ValueLayout& layout) {
    std::vector<Variable> inputs;
    for (const Variable& input : join.inputs()) inputs.push_back(blocked(input, join.provenance()));
    const auto moved =
        ApplyNode::create(join.op(), std::move(inputs), join.attrs(), join.provenance());
    restore(join.output(0), moved->output(0), layout, join.provenance());
  }

  // The mean of `mean`'s input over its spatial axes, on the blocked value: (N, C/B, 1, 1, B).
  Variable blocked_spatial_mean(const ApplyNode& mean) {
    const std::vector<std::int64_t> spatial{2, 3};
    const auto pooled =
        ApplyNode::create(mean.op(), {blocked(mean.input(0), mean.provenance())},
                          Attrs{{"axes", spatial}, {"keepdims", true}}, mean.provenance());
    return pooled->output(0);
  }

  // A spatial mean that drops the pooled axes: the blocked pool holds its channels in order, so
  // its (N, stored channels) reshape, sliced to the real channels when they are padded, is the
  // plain result, with no reorder.
  void rebuild_row_mean(const ApplyNode& mean, const ValueLayout& layout) {
    const Variable pooled = blocked_spatial_mean(mean);
    const ProvenanceScope scope(mean.provenance(), true);
    Variable rows = reshape(pooled, {-1, layout.stored_channels});
    if (layout.padded()) rows = subtensor(rows, {slice(), slice(0, layout.channels)});
    graph_.replace(mean.output(0), rows);
  }

  // The bias of a bias add in blocks: (C,) as (1, C/B, 1, 1, B), zero-padded to the stored
  // channels first when they are padded.
  Variable blocked_channel_vector(const Variable& vector,
                                  const ValueLayout& layout,
                                  const Provenance& provenance) {
    Variable stored = vector;
    if (layout.padded()) {
      TSCOPE_CHECK(vector.kind() == VariableKind::Constant,
                   "use_channel_blocks: a padded bias must be a constant");
      stored = make_constant(zero_padded_vector(vector.constant_value(), layout.stored_channels),
                             vector.name() + "_padded", std::source_location::current());
    }
    const std::vector<std::int64_t> shape{1, layout.stored_channels / plan_.block, 1, 1,
                                          plan_.block};
    const auto reshape = ApplyNode::create(
        op_def("Reshape"), {stored},
        Attrs{{"shape", shape}, {"ndim", static_cast<std::int64_t>(shape.size())}}, provenance);
    return reshape->output(0);
  }

  void rebuild_elementwise(const ApplyNode& node, const ValueLayout& layout) {
    std::vector<Variable> inputs;
    for (const Variable& input : node.inputs()) {
      if (const std::optional<double> scalar = detail::scalar_constant_value(input)) {
        // A rank-0 scalar broadcasts against the rank-5 blocked tensor as it did against rank 4.
        inputs.push_back(input.rank() == 0
                             ? input
                             : make_constant(Tensor::scalar(*scalar, input.dtype()), input.name(),
                                             std::source_location::current()));
      } else if (std::optional<Variable> bias = detail::channel_vector_of(input, layout.channels)) {
        inputs.push_back(blocked_channel_vector(*bias, layout, node.provenance()));
      } else {
        inputs.push_back(blocked(input, node.provenance()));
      }
    }
    const auto moved =
        ApplyNode::create(node.op(), std::move(inputs), node.attrs(), node.provenance());
    restore(node.output(0), moved->output(0), layout, node.provenance());
  }

  FunctionGraph& graph_;
  const LayoutPlan& plan_;
  bool winograd_;
  // Plain values and their blocked values: those restored from a blocked node, and the
  // ToChannelBlocks made for plain ones.
  std::unordered_map<const VariableNode*, Variable> blocked_of_;
};
}  // namespace

std::int64_t use_channel_blocks(FunctionGraph& graph, std::int64_t block, bool winograd) {
  const LayoutPlan plan = detail::assign_channel_layouts(graph, choose_block(block));
  return Materialiser(graph, plan, winograd).run();
}

}  // namespace tscope::rewrite
