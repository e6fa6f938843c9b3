// SPDX-License-Identifier: Apache-2.0
// use_channel_blocks and fold_constant_layouts: which nodes move onto the nChw8c layout, what they
// absorb, where data leaves the layout again, provenance, and that every rewritten graph computes
// what the plain graph computes (the same function compiled with the rule excluded).
#include <algorithm>
#include <map>
#include <string>

#include "support/graph_counts.h"
#include "support/test_util.h"
#include "tscope/ops/channel_blocks.h"

namespace tscope {
namespace {
using testing::all_close;
using testing::random_tensor;

Variable conv_weights(std::int64_t out, std::int64_t in, std::int64_t k, std::uint64_t seed) {
  return constant(random_tensor(DType::Float32, {out, in, k, k}, seed), "w" + std::to_string(seed));
}

Variable with_bias(const Variable& y, std::int64_t channels, std::uint64_t seed) {
  const Variable bias = constant(random_tensor(DType::Float32, {channels}, seed), "b");
  return y + dimshuffle(bias, {kNewAxis, 0, kNewAxis, kNewAxis});
}

using testing::op_counts;

const ApplyNode* first_node(const Function& f, std::string_view op_name) {
  for (const ApplyNode* node : f.graph().toposort()) {
    if (node->op().name == op_name) return node;
  }
  return nullptr;
}

// Blocks of 8 unless `block` says otherwise, whatever this CPU prefers, so that the expected
// layouts do not depend on the machine.
Function compile(const std::vector<Variable>& inputs, const std::vector<Variable>& outputs,
                 bool blocked, std::int64_t block = 8) {
  FunctionOptions options;
  options.channel_block = block;
  if (!blocked) options.excluded_rewrites = {"use_channel_blocks"};
  return function(inputs, outputs, {}, options);
}

// Runs both compilations on `values` and compares every output (float32 sums in another order:
// `atol` for deep graphs whose outputs reach well above 1 while some stay near 0).
void expect_same_results(Function& blocked, Function& plain, const std::vector<Tensor>& values,
                         double atol = 1e-5) {
  const std::vector<Tensor> expected = plain(values);
  const std::vector<Tensor> actual = blocked(values);
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_TRUE(all_close(actual[i], expected[i], 1e-4, atol)) << "output " << i;
  }
}

// An RGB stem (3 -> 16, bias, ReLU), a 3x3 convolution with bias and ReLU6, a max pool, a
// residual add and a global average pool: the shape of a small ResNet / MobileNet.
TEST(ChannelBlocks, SmallCnnMovesOntoBlocksAndMatchesPlain) {
  Variable x = tensor4(DType::Float32, "x");
  Variable stem = relu(with_bias(conv2d(x, conv_weights(16, 3, 3, 1), {.strides = {2, 2},
                                                               .padding = Padding::symmetric({1, 1})}),
                                 16, 2));
  Variable body = with_bias(conv2d(stem, conv_weights(16, 16, 3, 3),
                                   {.padding = Padding::symmetric({1, 1})}),
                            16, 4);
  body = minimum(maximum(body, 0.0), 6.0);
  Variable pooled = max_pool2d(body + stem, {.kernel = {3, 3}, .strides = {2, 2},
                                             .padding = Padding::symmetric({1, 1})});
  Variable out = global_avg_pool(pooled);

  Function blocked = compile({x}, {out}, true);
  Function plain = compile({x}, {out}, false);
  const std::map<std::string, int> counts = op_counts(blocked);
  EXPECT_EQ(counts.at("BlockedConv"), 2);
  EXPECT_EQ(counts.at("BlockedMaxPool"), 1);
  EXPECT_EQ(counts.at("FromChannelBlocks"), 1);      // only the pooled (N, C, 1, 1) output
  EXPECT_FALSE(counts.contains("ToChannelBlocks"));  // the stem reads plain RGB (Ohwi8o)
  EXPECT_FALSE(counts.contains("PackConvWeights"));  // folded: the weights are constants
  EXPECT_FALSE(counts.contains("Conv"));
  EXPECT_FALSE(counts.contains("Maximum"));  // both clamps became post-ops
  EXPECT_FALSE(counts.contains("Minimum"));
  EXPECT_EQ(counts.at("Add"), 1);  // the residual add, now on blocked data
  const ApplyNode* body_conv = nullptr;
  for (const ApplyNode* node : blocked.graph().toposort()) {
    if (node->op().name == "BlockedConv" && node->attrs().get_bool("in_blocked")) body_conv = node;
  }
  ASSERT_NE(body_conv, nullptr);
  EXPECT_TRUE(body_conv->attrs().get_bool("has_bias"));
  EXPECT_EQ(body_conv->attrs().get_double("lower"), 0.0);
  EXPECT_EQ(body_conv->attrs().get_double("upper"), 6.0);

  expect_same_results(blocked, plain, {random_tensor(DType::Float32, {2, 3, 17, 15}, 9)});
  expect_same_results(blocked, plain, {random_tensor(DType::Float32, {1, 3, 32, 32}, 10)});
}

// ResNet's basic blocks: relu(conv(relu(conv(x))) + x) and, downsampling, the sum of two
// convolutions. The skip connection's add becomes a post-op of the convolution computed last.
TEST(ChannelBlocks, SkipConnectionsBecomeConvolutionPostOps) {
  Variable x = tensor4(DType::Float32, "x");
  const ConvOptions same{.padding = Padding::symmetric({1, 1})};
  Variable stem = relu(with_bias(conv2d(x, conv_weights(8, 3, 3, 1), same), 8, 2));
  Variable inner = relu(with_bias(conv2d(stem, conv_weights(8, 8, 3, 3), same), 8, 4));
  Variable block = relu(with_bias(conv2d(inner, conv_weights(8, 8, 3, 5), same), 8, 6) + stem);
  const ConvOptions down{.strides = {2, 2}, .padding = Padding::symmetric({1, 1})};
  Variable main_path = with_bias(conv2d(block, conv_weights(16, 8, 3, 7), down), 16, 8);
  Variable shortcut = with_bias(conv2d(block, conv_weights(16, 8, 1, 9), {.strides = {2, 2}}), 16, 10);
  Variable out = relu(main_path + shortcut);

  Function blocked = compile({x}, {out}, true);
  Function plain = compile({x}, {out}, false);
  const std::map<std::string, int> counts = op_counts(blocked);
  EXPECT_EQ(counts.at("BlockedConv"), 5);
  EXPECT_FALSE(counts.contains("Add"));
  EXPECT_FALSE(counts.contains("Maximum"));
  int with_residual = 0;
  for (const ApplyNode* node : blocked.graph().toposort()) {
    if (node->op().name == "BlockedConv" && node->attrs().get_bool("has_residual")) ++with_residual;
  }
  EXPECT_EQ(with_residual, 2);
  const Tensor value = random_tensor(DType::Float32, {2, 3, 12, 10}, 11);
  expect_same_results(blocked, plain, {value});
  // BlockedConv's reference kernel (residual included) against its oneDNN kernel.
  EXPECT_TRUE(testing::fast_matches_reference({x}, {out}, {value}, 1e-4, 1e-5));
}

// ResNet's 3x3 stride-1 convolutions on 16-channel blocks get attr winograd where oneDNN has
// Winograd (AVX-512): bias, ReLU, a skip connection (a sum onto the destination there) and a
// clamp, against the plain graph on several calls, so that the transformed weights kept from the
// first call serve the later ones. Weights of a trained network's scale (about 1/sqrt(9 C)):
// Winograd's error grows with the magnitude of the products it sums. With
// FunctionOptions::winograd off, no node asks for it.
TEST(ChannelBlocks, ThreeByThreeConvolutionsOnSixteenChannelBlocksMayRunWinograd) {
  Variable x = tensor4(DType::Float32, "x");
  const ConvOptions same{.padding = Padding::symmetric({1, 1})};
  const auto weights = [](std::int64_t out, std::int64_t in, std::uint64_t seed) {
    return constant(random_tensor(DType::Float32, {out, in, 3, 3}, seed, -0.1, 0.1), "w");
  };
  Variable stem = relu(with_bias(conv2d(x, weights(32, 32, 1), same), 32, 2));
  Variable inner = relu(with_bias(conv2d(stem, weights(32, 32, 3), same), 32, 4));
  Variable block = relu(with_bias(conv2d(inner, weights(32, 32, 5), same), 32, 6) + stem);
  Variable out = minimum(maximum(conv2d(block, weights(16, 32, 7), same), -0.5), 0.5);
  const ConvOptions down{.strides = {2, 2}, .padding = Padding::symmetric({1, 1})};
  Variable strided = conv2d(block, weights(16, 32, 8), down);  // stride 2: direct

  Function blocked = compile({x}, {out, block, strided}, true, 16);
  Function plain = compile({x}, {out, block, strided}, false);
  int winograd_nodes = 0;
  for (const ApplyNode* node : blocked.graph().toposort()) {
    if (node->op().name != "BlockedConv" || !node->attrs().get_bool_or("winograd", false)) continue;
    ++winograd_nodes;
    EXPECT_NE(node->op_string().find(",nChw16c,winograd,"), std::string::npos) << node->op_string();
  }
  EXPECT_EQ(winograd_nodes, winograd_available() ? 4 : 0);
  for (std::uint64_t seed : {11, 12, 13}) {
    expect_same_results(blocked, plain, {random_tensor(DType::Float32, {2, 32, 9, 10}, seed)}, 1e-4);
  }

  FunctionOptions direct_only;
  direct_only.channel_block = 16;
  direct_only.winograd = false;
  Function direct = function({x}, {out, block, strided}, {}, direct_only);
  for (const ApplyNode* node : direct.graph().toposort()) {
    EXPECT_FALSE(node->attrs().get_bool_or("winograd", false)) << node->op_string();
  }
  expect_same_results(direct, plain, {random_tensor(DType::Float32, {2, 32, 9, 10}, 14)}, 1e-6);
}

// With static image sizes, Winograd is asked for only where it pays off: a 32 x 32 output from
// 16 channels (256 tiles) runs it, a 4 x 4 output from 32 channels (4 tiles) runs direct.
TEST(ChannelBlocks, WinogradOnlyWhereTheImageHasTilesEnough) {
  const ConvOptions same{.padding = Padding::symmetric({1, 1})};
  const auto winograd_convs = [&](std::int64_t side, std::int64_t channels) {
    Variable x = tensor(DType::Float32, {1, channels, side, side}, "x");
    const Variable w =
        constant(random_tensor(DType::Float32, {16, channels, 3, 3}, 1, -0.1, 0.1), "w");
    Function f = compile({x}, {conv2d(x, w, same)}, true, 16);
    int count = 0;
    for (const ApplyNode* node : f.graph().toposort()) {
      if (node->op().name == "BlockedConv" && node->attrs().get_bool_or("winograd", false)) ++count;
    }
    return count;
  };
  EXPECT_EQ(winograd_convs(32, 16), winograd_available() ? 1 : 0);
  EXPECT_EQ(winograd_convs(4, 32), 0);
  EXPECT_TRUE(winograd_pays_off(kUnknownDim, 8, 16));
  EXPECT_TRUE(winograd_pays_off(7, 7, 512));
  EXPECT_FALSE(winograd_pays_off(8, 8, 128));
}

TEST(ChannelBlocks, ReplacementsKeepTheUserCreationSite) {
  Variable x = tensor4(DType::Float32, "x");
  const int conv_line = __LINE__ + 1;
  Variable y = conv2d(x, conv_weights(8, 8, 1, 1));
  Function f = compile({x}, {y}, true);
  for (const ApplyNode* node : f.graph().toposort()) {
    EXPECT_EQ(node->provenance().site.line, static_cast<std::uint32_t>(conv_line))
        << node->to_string();
    EXPECT_EQ(node->provenance().user_op, "Conv") << node->to_string();
  }
  EXPECT_EQ(op_counts(f), (std::map<std::string, int>{
                              {"BlockedConv", 1}, {"FromChannelBlocks", 1}, {"ToChannelBlocks", 1}}));
}

TEST(ChannelBlocks, DepthwiseConvolutionUsesGroupBlocks) {
  Variable x = tensor4(DType::Float32, "x");
  Variable y = relu(conv2d(x, conv_weights(16, 1, 3, 5), {.strides = {2, 2},
                                                      .padding = Padding::symmetric({1, 1}),
                                                      .groups = 16}));
  Function blocked = compile({x}, {y}, true);
  Function plain = compile({x}, {y}, false);
  const ApplyNode* conv = first_node(blocked, "BlockedConv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs().get_string("layout"), "Goihw8g");
  EXPECT_EQ(conv->attrs().get_double("lower"), 0.0);
  expect_same_results(blocked, plain, {random_tensor(DType::Float32, {2, 16, 9, 10}, 6)});
}

TEST(ChannelBlocks, PlainClientsReadOneReorderedCopy) {
  Variable x = tensor4(DType::Float32, "x");
  Variable y = conv2d(x, conv_weights(8, 8, 3, 7), {.padding = Padding::same()});
  // exp is elementwise and moves; the sums (reductions) and the returned y need plain data.
  Variable out = sum(exp(y)) + sum(y);
  Function blocked = compile({x}, {out, y}, true);
  Function plain = compile({x}, {out, y}, false);
  const std::map<std::string, int> counts = op_counts(blocked);
  EXPECT_EQ(counts.at("BlockedConv"), 1);
  // y once (read by a sum and returned), exp(y) once (read by a sum).
  EXPECT_EQ(counts.at("FromChannelBlocks"), 2);
  expect_same_results(blocked, plain, {random_tensor(DType::Float32, {1, 8, 6, 5}, 8, -0.3, 0.3)});
}

TEST(ChannelBlocks, LeavesWhatCannotRunBlocked) {
  Variable x = tensor4(DType::Float32, "x");
  // O % 8 != 0, and padding 9 to 16 channels would add more than half.
  const Variable odd_out = conv2d(x, conv_weights(9, 8, 3, 2));
  // Weights not constant: no zero padding.
  const Variable trainable =
      conv2d(x, shared_fixed_shape(random_tensor(DType::Float32, {12, 8, 3, 3}, 1), "w"));
  // 4 channels per group: no block.
  const Variable grouped = conv2d(x, conv_weights(8, 4, 3, 3), {.groups = 2});
  Function f = compile({x}, {odd_out, trainable, grouped}, true);
  EXPECT_EQ(op_counts(f), (std::map<std::string, int>{{"Conv", 3}}));
}

Variable batch_norm_y(const Variable& x, std::int64_t channels, std::uint64_t seed) {
  const Variable gamma = shared_fixed_shape(random_tensor(DType::Float32, {channels}, seed),
                                            "gamma" + std::to_string(seed));
  const Variable beta = shared_fixed_shape(random_tensor(DType::Float32, {channels}, seed + 1),
                                           "beta" + std::to_string(seed));
  return apply_op(op_def("BatchNormTrain"), {x, gamma, beta}, Attrs{{"epsilon", 1e-5}},
                  std::source_location::current())[0];
}

// A training step's graph (shared weights, batch norms, a max pool, their gradients): the
// convolutions, their ConvGradI and ConvGradW, the batch norms, their gradients and the max
// pool's gradient run blocked, so that only the image enters the layout and only values near the
// loss leave it; the gradients match the plain graph's.
TEST(ChannelBlocks, TrainingStepRunsBlockedAndMatchesPlain) {
  Variable x = tensor4(DType::Float32, "x");
  const Variable w1 = shared_fixed_shape(random_tensor(DType::Float32, {16, 3, 3, 3}, 1), "w1");
  const Variable w2 = shared_fixed_shape(random_tensor(DType::Float32, {16, 16, 3, 3}, 2), "w2");
  const Variable w3 = shared_fixed_shape(random_tensor(DType::Float32, {8, 16, 3, 3}, 3), "w3");
  const Padding same = Padding::symmetric({1, 1});
  Variable h = relu(batch_norm_y(conv2d(x, w1, {.padding = same}), 16, 10));
  h = max_pool2d(h, {.kernel = {2, 2}, .strides = {2, 2}});
  Variable body = relu(batch_norm_y(conv2d(h, w2, {.padding = same}), 16, 20));
  body = relu(batch_norm_y(conv2d(body + h, w3, {.padding = same}), 8, 30));
  const Variable loss = mean(body * body);
  const std::vector<Variable> grads = grad(loss, {w1, w2, w3});
  std::vector<Variable> outputs{loss};
  outputs.insert(outputs.end(), grads.begin(), grads.end());
  Function blocked = compile({x}, outputs, true);
  Function plain = compile({x}, outputs, false);
  const std::map<std::string, int> counts = op_counts(blocked);
  EXPECT_EQ(counts.count("Conv"), 0U);
  EXPECT_EQ(counts.at("BlockedConv"), 3);
  EXPECT_EQ(counts.at("PackConvWeights"), 3);  // the weights change: packed on every call
  EXPECT_EQ(counts.at("BlockedConvGradI"), 2);
  EXPECT_EQ(counts.at("BlockedConvGradW"), 3);
  EXPECT_EQ(counts.at("BlockedBatchNormTrain"), 3);
  EXPECT_EQ(counts.at("BlockedBatchNormGrad"), 3);
  EXPECT_EQ(counts.at("BlockedMaxPoolGrad"), 1);
  EXPECT_EQ(counts.count("BatchNormGrad"), 0U);
  EXPECT_EQ(counts.count("ConvGradI"), 0U);
  // The first layer's ConvGradW reads the 3-channel image plain, the others blocked input.
  int plain_input = 0;
  for (const ApplyNode* node : blocked.graph().toposort()) {
    if (node->op().name != "BlockedConvGradW" || node->attrs().get_bool("in_blocked")) continue;
    ++plain_input;
    EXPECT_EQ(node->input(0).rank(), 4);
  }
  EXPECT_EQ(plain_input, 1);
  // Only at the loss: the value it reduces and the last ReLU's input and comparison leave the
  // layout, and the gradient computed from them enters it again. The image is read plain, and
  // the shapes the gradients need are read off the blocked values.
  EXPECT_EQ(counts.at("FromChannelBlocks"), 3);
  EXPECT_EQ(counts.at("ToChannelBlocks"), 1);
  expect_same_results(blocked, plain, {random_tensor(DType::Float32, {4, 3, 12, 10}, 9)}, 1e-4);
}

// A training step's 3x3 stride-1 convolutions on 16-channel blocks run Winograd in all three
// directions where oneDNN has it: the forward convolution on weights packed every call (which the
// kernel transforms within the call), and ConvGradI and ConvGradW with attr winograd. A stride-2
// convolution and its gradients stay direct. The loss and gradients match the plain compilation
// on weights of a trained network's scale; with FunctionOptions::winograd off no node asks for it.
TEST(ChannelBlocks, TrainingStepConvolutionsMayRunWinograd) {
  Variable x = tensor4(DType::Float32, "x");
  const auto weights = [](std::int64_t in, std::uint64_t seed) {
    return shared_fixed_shape(random_tensor(DType::Float32, {16, in, 3, 3}, seed, -0.1, 0.1),
                              "w" + std::to_string(seed));
  };
  const Variable w1 = weights(16, 1);
  const Variable w2 = weights(16, 2);
  const Variable w3 = weights(16, 3);
  const Padding same = Padding::symmetric({1, 1});
  Variable h = relu(batch_norm_y(conv2d(x, w1, {.padding = same}), 16, 10));
  h = relu(batch_norm_y(conv2d(h, w2, {.padding = same}), 16, 20));
  const Variable down = conv2d(h, w3, {.strides = {2, 2}, .padding = same});
  const Variable loss = mean(down * down);
  const std::vector<Variable> grads = grad(loss, {w1, w2, w3});
  std::vector<Variable> outputs{loss};
  outputs.insert(outputs.end(), grads.begin(), grads.end());
  const auto winograd_nodes = [](const Function& f) {
    std::map<std::string, int> counts;
    for (const ApplyNode* node : f.graph().toposort()) {
      if (!node->attrs().get_bool_or("winograd", false)) continue;
      ++counts[std::string(node->op().name)];
      EXPECT_NE(node->op_string().find(",nChw16c,winograd"), std::string::npos)
          << node->op_string();
    }
    return counts;
  };
  Function blocked = compile({x}, outputs, true, 16);
  Function plain = compile({x}, outputs, false);
  const std::map<std::string, int> expected =
      winograd_available() ? std::map<std::string, int>{{"BlockedConv", 2},
                                                        {"BlockedConvGradI", 1},
                                                        {"BlockedConvGradW", 2}}
                           : std::map<std::string, int>{};
  EXPECT_EQ(winograd_nodes(blocked), expected);
  for (std::uint64_t seed : {31, 32}) {
    expect_same_results(blocked, plain, {random_tensor(DType::Float32, {2, 16, 12, 10}, seed)},
                        1e-4);
  }

  FunctionOptions direct_only;
  direct_only.channel_block = 16;
  direct_only.winograd = false;
  Function direct = function({x}, outputs, {}, direct_only);
  EXPECT_TRUE(winograd_nodes(direct).empty());
  expect_same_results(direct, plain, {random_tensor(DType::Float32, {2, 16, 12, 10}, 33)}, 1e-5);
}

TEST(ChannelBlocks, ChannelsPerBroadcastStayPlain) {
  // An add of a (1, C, 1, 1) tensor that is not a convolution's bias needs plain channels.
  Variable x = tensor4(DType::Float32, "x");
  Variable scale = constant(random_tensor(DType::Float32, {1, 8, 1, 1}, 12), "scale");
  Variable y = conv2d(x, conv_weights(8, 8, 1, 4)) * scale;
  Function blocked = compile({x}, {y}, true);
  Function plain = compile({x}, {y}, false);
  EXPECT_EQ(op_counts(blocked).at("Mul"), 1);
  EXPECT_EQ(first_node(blocked, "Mul")->output(0).rank(), 4);
  expect_same_results(blocked, plain, {random_tensor(DType::Float32, {2, 8, 4, 4}, 11)});
}

// AVX-512's 16-channel blocks: convolutions whose channels fit them move (the RGB stem reads plain
// input, OhwiBo), one whose 24 channels do not stays a plain Conv between reorders, and the
// results match the plain graph.
TEST(ChannelBlocks, SixteenChannelBlocksLeaveWhatDoesNotFit) {
  Variable x = tensor4(DType::Float32, "x");
  const ConvOptions same{.padding = Padding::symmetric({1, 1})};
  Variable stem = relu(with_bias(conv2d(x, conv_weights(32, 3, 3, 1), same), 32, 2));
  Variable body = relu(with_bias(conv2d(stem, conv_weights(32, 32, 3, 3), same), 32, 4) + stem);
  // O = 20: not a multiple of 16, and padding it to 32 would add more than half.
  Variable narrow = conv2d(body, conv_weights(20, 32, 1, 5));
  Variable out = max_pool2d(relu(conv2d(narrow, conv_weights(32, 20, 1, 6))), {.kernel = {2, 2}});

  Function blocked = compile({x}, {out}, true, 16);
  Function plain = compile({x}, {out}, false);
  const std::map<std::string, int> counts = op_counts(blocked);
  EXPECT_EQ(counts.at("BlockedConv"), 2);
  EXPECT_EQ(counts.at("Conv"), 2);  // 32 -> 20 and 20 -> 32
  EXPECT_EQ(counts.at("FromChannelBlocks"), 1);
  std::vector<std::string> layouts;
  for (const ApplyNode* node : blocked.graph().toposort()) {
    if (node->op().name == "BlockedConv") {
      layouts.push_back(node->attrs().get_string("layout"));
      EXPECT_EQ(node->attrs().get_int("block"), 16);
    }
  }
  EXPECT_EQ(layouts, (std::vector<std::string>{"Ohwi16o", "OIhw16i16o"}));
  expect_same_results(blocked, plain, {random_tensor(DType::Float32, {2, 3, 10, 12}, 7)}, 1e-4);
}

// A convolution that fits no block keeps plain data but takes its bias add: after a blocked
// convolution it reads one FromChannelBlocks, its clamp stays separate (one Clip node), and the
// next convolution, which fits no block either, reads the clamp's plain output.
TEST(ChannelBlocks, PlainConvolutionsFuseTheirBias) {
  Variable x = tensor4(DType::Float32, "x");
  const ConvOptions same{.padding = Padding::symmetric({1, 1})};
  Variable first = relu(with_bias(conv2d(x, conv_weights(16, 16, 3, 1), same), 16, 2));
  // O = 9 and then C = 9: no block, and padding to 16 would add more than half.
  const int narrow_line = __LINE__ + 1;
  Variable narrow = with_bias(conv2d(first, conv_weights(9, 16, 1, 3)), 9, 4);
  Variable clamped = minimum(maximum(narrow, 0.0), 6.0);
  Variable out = with_bias(conv2d(clamped, conv_weights(16, 9, 1, 5)), 16, 6);

  Function blocked = compile({x}, {out, narrow}, true);
  Function plain = compile({x}, {out, narrow}, false);
  const std::map<std::string, int> counts = op_counts(blocked);
  EXPECT_EQ(counts.at("BlockedConv"), 3);
  EXPECT_FALSE(counts.contains("Conv"));
  EXPECT_FALSE(counts.contains("Add"));
  EXPECT_EQ(counts.at("Clip"), 1);
  EXPECT_EQ(counts.at("FromChannelBlocks"), 1);  // into the plain convolution
  EXPECT_EQ(counts.at("ToChannelBlocks"), 1);    // the input only
  const ApplyNode* fused = nullptr;
  for (const ApplyNode* node : blocked.graph().toposort()) {
    if (node->op().name == "BlockedConv" && node->attrs().get_int("block") == 0) {
      fused = node;  // the first of the two
      break;
    }
  }
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->attrs().get_string("layout"), "oihw");
  EXPECT_TRUE(fused->attrs().get_bool("has_bias"));
  EXPECT_EQ(fused->provenance().site.line, static_cast<std::uint32_t>(narrow_line));
  EXPECT_EQ(fused->op_string(), "Conv2d{stride=(1,1),pad=(0,0),dilation=(1,1),groups=1,nchw,bias}");
  // narrow is also a graph output: it reads the fused convolution.
  EXPECT_EQ(blocked.graph().outputs()[1].owner(), fused);
  expect_same_results(blocked, plain, {random_tensor(DType::Float32, {2, 16, 7, 6}, 7)}, 1e-4);
  // Without a bias add there is nothing to fuse: the convolution stays a Conv.
  Function bare = compile({x}, {conv2d(first, conv_weights(9, 16, 1, 3))}, true);
  EXPECT_EQ(op_counts(bare).at("Conv"), 1);
}

// MobileNet-v2's narrow layers on 16-channel blocks: 16 -> 24 (bias), 24 -> 48 (bias, ReLU6) and
// 48 -> 24 (bias, skip connection) run blocked on 32 channels, the padding zero, with no reorder
// or elementwise node between them. The 24-channel graph output leaves through one
// FromChannelBlocks and a slice; log, which could turn a padded zero into -inf, stays plain and
// reads the same slice.
TEST(ChannelBlocks, NarrowConvolutionsRunOnZeroPaddedChannels) {
  Variable x = tensor4(DType::Float32, "x");
  const ConvOptions same{.padding = Padding::symmetric({1, 1})};
  Variable first = relu(with_bias(conv2d(x, conv_weights(16, 16, 3, 1), same), 16, 2));
  const int narrow_line = __LINE__ + 1;
  Variable narrow = with_bias(conv2d(first, conv_weights(24, 16, 1, 3)), 24, 4);
  Variable expanded = minimum(maximum(with_bias(conv2d(narrow, conv_weights(48, 24, 1, 5)), 48, 6),
                                      0.0),
                              6.0);
  Variable projected = with_bias(conv2d(expanded, conv_weights(24, 48, 1, 7)), 24, 8) + narrow;
  Variable logged = log(abs(projected) + 1.0);

  Function blocked = compile({x}, {projected, logged}, true, 16);
  Function plain = compile({x}, {projected, logged}, false);
  const std::map<std::string, int> counts = op_counts(blocked);
  EXPECT_EQ(counts.at("BlockedConv"), 4);
  EXPECT_FALSE(counts.contains("Conv"));
  EXPECT_FALSE(counts.contains("Clip"));
  EXPECT_EQ(counts.at("ToChannelBlocks"), 1);    // the input only
  EXPECT_EQ(counts.at("FromChannelBlocks"), 1);  // the projection, for both of its readers
  EXPECT_EQ(counts.at("Subtensor"), 1);
  EXPECT_EQ(counts.at("Composite"), 1);  // log(abs(projected) + 1), fused into one node
  std::vector<std::pair<std::int64_t, std::int64_t>> channels;
  for (const ApplyNode* node : blocked.graph().toposort()) {
    if (node->op().name != "BlockedConv") continue;
    EXPECT_EQ(node->attrs().get_string("layout"), "OIhw16i16o");
    channels.emplace_back(node->attrs().get_int("channels"), node->attrs().get_int("out_channels"));
    if (node->attrs().get_int("out_channels") == 32 && node->attrs().get_int("channels") == 16) {
      EXPECT_EQ(node->provenance().site.line, static_cast<std::uint32_t>(narrow_line));
    }
  }
  EXPECT_EQ(channels, (std::vector<std::pair<std::int64_t, std::int64_t>>{
                          {16, 16}, {16, 32}, {32, 48}, {48, 32}}));
  const ApplyNode* slice = blocked.graph().outputs()[0].owner();
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(slice->op().name, "Subtensor");
  EXPECT_EQ(blocked.graph().outputs()[0].type().dims[1], 24);
  expect_same_results(blocked, plain, {random_tensor(DType::Float32, {2, 16, 7, 6}, 9)}, 1e-4);
  // On 8-channel blocks 24 fits: nothing is padded.
  Function eight = compile({x}, {projected}, true, 8);
  EXPECT_FALSE(op_counts(eight).contains("Subtensor"));
}

// RegNet-Y's stages of 104 or 440 channels on 16-channel blocks: the grouped 3x3 convolution (8
// channels per group) stays plain, so the 1x1 convolution after it reads plain data whose channels
// fill no whole block. It runs blocked on 448 channels all the same: a ToChannelBlocks zero-pads
// its input, the weights are padded at compile time, and the result matches the plain graph.
TEST(ChannelBlocks, PlainInputIsPaddedOnItsWayIntoABlockedConvolution) {
  Variable x = tensor4(DType::Float32, "x");
  const ConvOptions same{.padding = Padding::symmetric({1, 1}), .groups = 55};
  Variable grouped = relu(with_bias(conv2d(x, conv_weights(440, 8, 3, 1), same), 440, 2));
  Variable projected = with_bias(conv2d(grouped, conv_weights(440, 440, 1, 3)), 440, 4);
  Function blocked = compile({x}, {projected}, true, 16);
  Function plain = compile({x}, {projected}, false);
  const std::map<std::string, int> counts = op_counts(blocked);
  ASSERT_TRUE(counts.contains("BlockedConv"));
  const ApplyNode* reorder = first_node(blocked, "ToChannelBlocks");
  ASSERT_NE(reorder, nullptr);
  EXPECT_EQ(reorder->output(0).type().dims[1], 28);  // 448 channels in blocks of 16
  bool padded_projection = false;
  for (const ApplyNode* node : blocked.graph().toposort()) {
    if (node->op().name == "BlockedConv" && node->attrs().get_string("layout") == "OIhw16i16o") {
      padded_projection =
          node->attrs().get_int("channels") == 448 && node->attrs().get_int("out_channels") == 448;
    }
  }
  EXPECT_TRUE(padded_projection);
  expect_same_results(blocked, plain, {random_tensor(DType::Float32, {2, 440, 5, 6}, 5)}, 1e-4);
}

// MobileNet-v3's inverted residual on channel counts that may fit no block: a 1x1 expansion with
// bias and HardSwish, a depthwise convolution (3x3 or 5x5, stride 1 or 2) with bias and ReLU, a
// skip connection's add at stride 1, and a 1x1 projection. Where rounding the channels up to the
// block adds at most half, the depthwise convolution runs blocked on the padded channels (one group
// per padded channel, zero weights and bias in the padded ones), reading its input straight from
// the padded expansion; otherwise it stays a plain Conv. Both match the plain graph.
TEST(ChannelBlocks, DepthwiseConvolutionsRunOnZeroPaddedChannels) {
  const auto hardswish = [](const Variable& v) {
    return v * clip(v * (1.0 / 6.0) + 0.5, 0.0, 1.0);
  };
  std::uint64_t seed = 20;
  for (const std::int64_t block : {8, 16}) {
    for (const std::int64_t channels : {8, 12, 20, 72, 120}) {
      for (const std::int64_t stride : {1, 2}) {
        const std::int64_t kernel = stride == 1 ? 3 : 5;
        SCOPED_TRACE(::testing::Message()
                     << "block " << block << ", " << channels << " channels, stride " << stride);
        Variable x = tensor4(DType::Float32, "x");
        // Six seeds per case, named so that no expression reads the counter twice.
        const std::uint64_t s = seed;
        seed += 6;
        Variable expanded =
            hardswish(with_bias(conv2d(x, conv_weights(channels, 16, 1, s)), channels, s + 1));
        Variable depthwise =
            relu(with_bias(conv2d(expanded, conv_weights(channels, 1, kernel, s + 2),
                                  {.strides = {stride, stride},
                                   .padding = Padding::symmetric({kernel / 2, kernel / 2}),
                                   .groups = channels}),
                           channels, s + 3));
        if (stride == 1) depthwise = depthwise + expanded;
        Variable out =
            with_bias(conv2d(depthwise, conv_weights(16, channels, 1, s + 4)), 16, s + 5);

        Function blocked = compile({x}, {out, depthwise}, true, block);
        Function plain = compile({x}, {out, depthwise}, false);
        const std::int64_t padded = (channels + block - 1) / block * block;
        const bool runs_blocked = 2 * padded <= 3 * channels;
        const ApplyNode* dw_conv = nullptr;
        for (const ApplyNode* node : blocked.graph().toposort()) {
          if (node->op().name == "BlockedConv" && node->attrs().get_int("groups") != 1)
            dw_conv = node;
        }
        const std::map<std::string, int> counts = op_counts(blocked);
        if (runs_blocked) {
          ASSERT_NE(dw_conv, nullptr);
          EXPECT_FALSE(counts.contains("Conv"));
          EXPECT_EQ(dw_conv->attrs().get_string("layout"), "Goihw" + std::to_string(block) + "g");
          EXPECT_EQ(dw_conv->attrs().get_int("channels"), padded);
          EXPECT_EQ(dw_conv->attrs().get_int("out_channels"), padded);
          EXPECT_EQ(dw_conv->attrs().get_int("groups"), padded);
          EXPECT_TRUE(dw_conv->attrs().get_bool("has_bias"));
          const std::string printed =
              "groups=" + std::to_string(padded) + ",nChw" + std::to_string(block) + "c,bias";
          EXPECT_NE(dw_conv->op_string().find(printed), std::string::npos) << dw_conv->op_string();
          // Only the input enters the layout; only the two graph outputs leave it.
          EXPECT_EQ(counts.at("ToChannelBlocks"), 1);
          EXPECT_EQ(counts.at("FromChannelBlocks"), 2);
          EXPECT_EQ(counts.contains("Subtensor") ? counts.at("Subtensor") : 0,
                    padded != channels ? 1 : 0);
        } else {
          EXPECT_EQ(dw_conv, nullptr);
          EXPECT_EQ(counts.at("Conv"), 1);
        }
        for (const std::int64_t side : {9, 10}) {
          expect_same_results(blocked, plain,
                              {random_tensor(DType::Float32, {2, 16, side, side + 3}, seed++)},
                              1e-4);
        }
      }
    }
  }
}

// A depthwise convolution with a channel multiplier (groups = C, O = 2 C) has no blocked kernel in
// oneDNN; it stays a plain Conv whether or not its channels fit the block.
TEST(ChannelBlocks, DepthwiseChannelMultiplierStaysPlain) {
  for (const std::int64_t channels : {12, 16}) {
    Variable x = tensor4(DType::Float32, "x");
    Variable expanded = with_bias(conv2d(x, conv_weights(channels, 16, 1, 1)), channels, 2);
    Variable y = conv2d(expanded, conv_weights(2 * channels, 1, 3, 3),
                        {.padding = Padding::symmetric({1, 1}), .groups = channels});
    Function blocked = compile({x}, {y}, true, 16);
    Function plain = compile({x}, {y}, false);
    EXPECT_EQ(op_counts(blocked).at("Conv"), 1);
    expect_same_results(blocked, plain, {random_tensor(DType::Float32, {2, 16, 7, 6}, 4)}, 1e-4);
  }
}

// RegNet's and ResNeXt's grouped 3x3 convolutions between 1x1 convolutions: with each group's
// input and output channels a multiple of the block (16 per group), the grouped convolution runs
// blocked (gOIhw16i16o) with its bias and ReLU fused and no reorder around it; with 4 or 8 per
// group it stays a plain Conv between reorders. Both match the plain graph.
TEST(ChannelBlocks, GroupedConvolutionsRunBlockedWhenEachGroupFitsTheBlock) {
  for (const std::int64_t per_group : {16, 8, 4}) {
    SCOPED_TRACE(::testing::Message() << per_group << " channels per group");
    const std::int64_t channels = 64;
    const std::int64_t groups = channels / per_group;
    Variable x = tensor4(DType::Float32, "x");
    Variable expanded = relu(with_bias(conv2d(x, conv_weights(channels, 16, 1, 1)), channels, 2));
    Variable grouped = relu(with_bias(
        conv2d(expanded, conv_weights(channels, per_group, 3, 3),
               {.strides = {2, 2}, .padding = Padding::symmetric({1, 1}), .groups = groups}),
        channels, 4));
    Variable out = with_bias(conv2d(grouped, conv_weights(32, channels, 1, 5)), 32, 6);

    Function blocked = compile({x}, {out}, true, 16);
    Function plain = compile({x}, {out}, false);
    const std::map<std::string, int> counts = op_counts(blocked);
    const ApplyNode* grouped_conv = nullptr;
    for (const ApplyNode* node : blocked.graph().toposort()) {
      if (node->op().name == "BlockedConv" && node->attrs().get_int("groups") == groups) {
        grouped_conv = node;
      }
    }
    if (per_group % 16 == 0) {
      ASSERT_NE(grouped_conv, nullptr);
      EXPECT_EQ(grouped_conv->attrs().get_string("layout"), "gOIhw16i16o");
      const std::string printed = "groups=" + std::to_string(groups) + ",nChw16c,bias,relu";
      EXPECT_NE(grouped_conv->op_string().find(printed), std::string::npos)
          << grouped_conv->op_string();
      EXPECT_FALSE(counts.contains("Conv"));
      EXPECT_EQ(counts.at("ToChannelBlocks"), 1);    // the input only
      EXPECT_EQ(counts.at("FromChannelBlocks"), 1);  // the graph output only
    } else {
      EXPECT_EQ(grouped_conv, nullptr);
      EXPECT_EQ(counts.at("Conv"), 1);
    }
    expect_same_results(blocked, plain, {random_tensor(DType::Float32, {2, 16, 9, 8}, 7)}, 1e-4);
  }
}

// A squeeze-and-excitation block (MobileNet-v3, EfficientNet): a global average pool, two 1x1
// convolutions and a sigmoid make one scale per sample and channel, which multiplies the pooled
// value. The pool runs on the blocked value, so the excitation's convolutions and the multiply read
// blocked values and nothing leaves the layout. On 16-channel blocks the 24 channels run padded to
// 32, and the head's mean that drops the pooled axes (as a ReduceMean over (2, 3) exports) becomes
// a view of the blocked pool, sliced to the real channels, with no reorder.
TEST(ChannelBlocks, SqueezeAndExcitationPoolsOnBlocks) {
  for (const std::int64_t channels : {32, 24}) {
    SCOPED_TRACE(::testing::Message() << channels << " channels");
    Variable x = tensor4(DType::Float32, "x");
    Variable y = relu(with_bias(conv2d(x, conv_weights(channels, 16, 1, 1)), channels, 2));
    Variable squeezed =
        relu(with_bias(conv2d(mean(y, {2, 3}, true), conv_weights(16, channels, 1, 3)), 16, 4));
    Variable scale =
        sigmoid(with_bias(conv2d(squeezed, conv_weights(channels, 16, 1, 5)), channels, 6));
    Variable excited = y * scale;
    Variable out =
        mean(with_bias(conv2d(excited, conv_weights(channels, channels, 1, 7)), channels, 8),
             {2, 3}, false);

    Function blocked = compile({x}, {out}, true, 16);
    Function plain = compile({x}, {out}, false);
    const std::map<std::string, int> counts = op_counts(blocked);
    EXPECT_FALSE(counts.contains("Conv"));
    EXPECT_FALSE(counts.contains("FromChannelBlocks"));
    EXPECT_EQ(counts.at("ToChannelBlocks"), 1);  // the input only
    EXPECT_EQ(counts.at("Mean"), 2);
    for (const ApplyNode* node : blocked.graph().toposort()) {
      if (node->op().name == "Mean") {
        EXPECT_EQ(node->input(0).rank(), 5);
      }
    }
    EXPECT_EQ(counts.contains("Subtensor"), channels == 24);
    EXPECT_EQ(blocked.graph().outputs()[0].type().dims[1], channels);
    expect_same_results(blocked, plain, {random_tensor(DType::Float32, {2, 16, 5, 6}, 9)}, 1e-4);
  }
}

TEST(ChannelBlocks, TheDefaultBlockIsTheCpusPreferred) {
  Variable x = tensor4(DType::Float32, "x");
  Variable y = conv2d(x, conv_weights(32, 32, 3, 1));
  Function f = function({x}, {y});
  const ApplyNode* conv = first_node(f, "BlockedConv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs().get_int("block"), preferred_channel_block());

  FunctionOptions options;
  options.channel_block = 12;
  try {
    (void)function({x}, {y}, {}, options);
    FAIL() << "expected InvalidArgument";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(error.what()).find("channel block 12 (8 or 16)"), std::string::npos)
        << error.what();
  }
}

TEST(ChannelBlocks, ExcludingAnUnknownRewriteIsAnError) {
  Variable x = tensor4(DType::Float32, "x");
  FunctionOptions options;
  options.excluded_rewrites = {"use_chanel_blocks"};
  try {
    (void)function({x}, {relu(x)}, {}, options);
    FAIL() << "expected InvalidArgument";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(error.what()).find("'use_chanel_blocks'"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("use_channel_blocks"), std::string::npos);
  }
}

TEST(ConstantLayoutFolding, PackedWeightsBecomeNamedConstants) {
  Variable x = tensor4(DType::Float32, "x");
  Variable y = conv2d(x, conv_weights(16, 8, 3, 5));
  Function folded = compile({x}, {y}, true);
  const ApplyNode* conv = first_node(folded, "BlockedConv");
  ASSERT_NE(conv, nullptr);
  const Variable& packed = conv->input(1);
  ASSERT_EQ(packed.kind(), VariableKind::Constant);
  EXPECT_EQ(packed.name(), "w5 (PackConvWeights)");
  EXPECT_EQ(packed.constant_value().shape(), (Dims{2, 1, 3, 3, 8, 8}));

  FunctionOptions unfolded_options;
  unfolded_options.excluded_rewrites = {"fold_constant_layouts"};
  unfolded_options.channel_block = 8;
  Function unfolded = function({x}, {y}, {}, unfolded_options);
  EXPECT_EQ(op_counts(unfolded).at("PackConvWeights"), 1);
  const Tensor value = random_tensor(DType::Float32, {1, 8, 5, 5}, 3);
  EXPECT_TRUE(all_close(folded({value})[0], unfolded({value})[0], 0, 0));
}

}  // namespace
}  // namespace tscope
