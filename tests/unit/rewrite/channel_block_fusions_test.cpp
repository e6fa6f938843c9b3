// SPDX-License-Identifier: Apache-2.0
// fuse_conv_bias, fuse_conv_residual and fuse_conv_clamp, one at a time: each folds its op into
// the BlockedConv before it, leaves near-misses alone (a second reader of the convolution's
// output, the epilogue's order, a bound that is not a scalar), keeps the convolution's provenance,
// and computes what the unblocked graph computes. Also: the fusion stage follows
// use_channel_blocks, and excluding that excludes it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "support/graph_counts.h"
#include "support/test_util.h"
#include "tscope/ops/channel_blocks.h"
#include "tscope/ops/registry.h"
#include "tscope/rewrite/channel_block_rules.h"
#include "tscope/rewrite/pipeline.h"

namespace tscope {
namespace {
using testing::all_close;
using testing::random_tensor;

const ConvOptions kSame{.padding = Padding::symmetric({1, 1})};

Variable conv_weights(std::int64_t out, std::int64_t in, std::uint64_t seed) {
  return constant(random_tensor(DType::Float32, {out, in, 3, 3}, seed, -0.3, 0.3),
                  "w" + std::to_string(seed));
}

Variable bias_vector(std::int64_t channels, std::uint64_t seed) {
  return constant(random_tensor(DType::Float32, {channels}, seed), "b" + std::to_string(seed));
}

Variable with_bias(const Variable& y, std::int64_t channels, std::uint64_t seed) {
  return y + dimshuffle(bias_vector(channels, seed), {kNewAxis, 0, kNewAxis, kNewAxis});
}

using testing::op_counts;

std::vector<const ApplyNode*> blocked_convs(const Function& f) {
  std::vector<const ApplyNode*> convs;
  for (const ApplyNode* node : f.graph().toposort()) {
    if (node->op().name == "BlockedConv") convs.push_back(node);
  }
  return convs;
}

// Blocks of 8, without the rewrites named in `excluded`.
Function compile(const std::vector<Variable>& inputs,
                 const std::vector<Variable>& outputs,
                 std::vector<std::string> excluded = {}) {
  FunctionOptions options;
  options.channel_block = 8;
  options.excluded_rewrites = std::move(excluded);
  return function(inputs, outputs, {}, options);
}

// Every function gives the first one's values (the plain graph's: float32 sums in another order).
void expect_same_results(const std::vector<Function*>& functions, const Tensor& value) {
  std::vector<std::vector<Tensor>> results;
  for (Function* f : functions) results.push_back((*f)({value}));
  for (std::size_t i = 1; i < results.size(); ++i) {
    ASSERT_EQ(results[i].size(), results[0].size());
    for (std::size_t o = 0; o < results[0].size(); ++o) {
      EXPECT_TRUE(all_close(results[i][o], results[0][o], 1e-4, 1e-5))
          << "function " << i << ", output " << o;
    }
  }
}

// ---- fuse_conv_bias ----

TEST(FuseConvBias, FoldsTheBiasAddIntoTheConvolution) {
  Variable x = tensor4(DType::Float32, "x");
  const int conv_line = __LINE__ + 1;
  Variable y = conv2d(x, conv_weights(16, 8, 1), kSame);
  Variable out = with_bias(y, 16, 2);

  Function fused = compile({x}, {out});
  Function unfused = compile({x}, {out}, {"fuse_conv_bias"});
  Function plain = compile({x}, {out}, {"use_channel_blocks"});
  const std::vector<const ApplyNode*> convs = blocked_convs(fused);
  ASSERT_EQ(convs.size(), 1u);
  EXPECT_TRUE(convs[0]->attrs().get_bool("has_bias"));
  EXPECT_EQ(convs[0]->provenance().site.line, static_cast<std::uint32_t>(conv_line));
  EXPECT_EQ(convs[0]->provenance().user_op, "Conv");
  EXPECT_FALSE(op_counts(fused).contains("Add"));
  EXPECT_FALSE(op_counts(fused).contains("Reshape"));
  // Without the rule the add runs on blocked data, the bias rearranged into blocks.
  EXPECT_EQ(op_counts(unfused).at("Add"), 1);
  EXPECT_EQ(op_counts(unfused).at("Reshape"), 1);
  EXPECT_FALSE(blocked_convs(unfused)[0]->attrs().get_bool("has_bias"));

  const Tensor value = random_tensor(DType::Float32, {2, 8, 6, 5}, 3);
  expect_same_results({&plain, &fused, &unfused}, value);
}

TEST(FuseConvBias, LeavesAConvolutionWhoseOutputHasAnotherReader) {
  Variable x = tensor4(DType::Float32, "x");
  Variable y = conv2d(x, conv_weights(16, 8, 1), kSame);
  Function blocked = compile({x}, {with_bias(y, 16, 2), y});
  Function plain = compile({x}, {with_bias(y, 16, 2), y}, {"use_channel_blocks"});
  EXPECT_FALSE(blocked_convs(blocked)[0]->attrs().get_bool("has_bias"));
  EXPECT_EQ(op_counts(blocked).at("Add"), 1);
  expect_same_results({&plain, &blocked}, random_tensor(DType::Float32, {1, 8, 5, 4}, 4));
}

// The rule on its own over a hand-built blocked graph: the conv output read a second time (by
// exp) keeps its add; read once, it takes it.
TEST(FuseConvBias, ReadsTheClientsIndex) {
  Variable x = tensor5(DType::Float32, "x");  // already blocked: (N, C/8, H, W, 8)
  const Variable w = conv_weights(16, 8, 1);
  const Variable plain_conv = conv2d(tensor4(DType::Float32, "like_x"), w, kSame);
  const Variable packed =
      apply_op1(op_def("PackConvWeights"), {w},
                {{"block", 8}, {"groups", 1}, {"layout", std::string("OIhw8i8o")}},
                std::source_location::current());
  const Variable y = apply_op1(op_def("BlockedConv"), {x, packed},
                               blocked_conv_attrs(plain_conv.owner()->attrs(), "OIhw8i8o", 8, 16),
                               std::source_location::current());
  const Variable spread = reshape(bias_vector(16, 2), {1, 2, 1, 1, 8});
  const rewrite::LocalRule rule = rewrite::conv_bias_rule();
  for (const bool second_reader : {true, false}) {
    SCOPED_TRACE(second_reader);
    std::vector<Variable> outputs{y + spread};
    if (second_reader) outputs.push_back(exp(y));
    FunctionGraph graph = FunctionGraph::clone_of({x}, outputs);
    FakeClock clock(1);
    std::vector<rewrite::RuleReport> reports;
    rewrite::apply_to_fixed_point(graph, {&rule, 1}, clock, reports);
    graph.check_index();
    EXPECT_EQ(reports[0].changes, second_reader ? 0 : 1);
    const ApplyNode* conv = graph.outputs()[0].owner();
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->op().name, second_reader ? "Add" : "BlockedConv");
  }
}

// ---- fuse_conv_residual ----

// s = relu(conv(x) + b); out = conv(s) + b2 + s: the second convolution adds s as a post-op.
TEST(FuseConvResidual, FoldsASkipConnectionIntoTheConvolution) {
  Variable x = tensor4(DType::Float32, "x");
  Variable stem = relu(with_bias(conv2d(x, conv_weights(8, 8, 1), kSame), 8, 2));
  const int body_line = __LINE__ + 1;
  Variable body = conv2d(stem, conv_weights(8, 8, 3), kSame);
  Variable out = with_bias(body, 8, 4) + stem;

  Function fused = compile({x}, {out});
  Function unfused = compile({x}, {out}, {"fuse_conv_residual"});
  Function plain = compile({x}, {out}, {"use_channel_blocks"});
  EXPECT_FALSE(op_counts(fused).contains("Add"));
  const std::vector<const ApplyNode*> convs = blocked_convs(fused);
  ASSERT_EQ(convs.size(), 2u);
  EXPECT_FALSE(convs[0]->attrs().get_bool("has_residual"));
  EXPECT_TRUE(convs[1]->attrs().get_bool("has_residual"));
  EXPECT_TRUE(convs[1]->attrs().get_bool("has_bias"));
  EXPECT_EQ(convs[1]->provenance().site.line, static_cast<std::uint32_t>(body_line));
  // Without the rule the skip connection's add stays, on blocked data.
  ASSERT_EQ(op_counts(unfused).at("Add"), 1);
  EXPECT_EQ(op_counts(unfused).at("FromChannelBlocks"), 1);

  expect_same_results({&plain, &fused, &unfused}, random_tensor(DType::Float32, {2, 8, 6, 7}, 5));
}

// The sum of two convolutions (ResNet's downsampling block): the second operand's convolution,
// computed last, takes the first one's output.
TEST(FuseConvResidual, TheConvolutionComputedLastTakesTheAdd) {
  Variable x = tensor4(DType::Float32, "x");
  Variable main_path = with_bias(conv2d(x, conv_weights(16, 8, 1), kSame), 16, 2);
  const int shortcut_line = __LINE__ + 1;
  Variable shortcut = conv2d(x, conv_weights(16, 8, 3), kSame);
  Function fused = compile({x}, {main_path + shortcut});
  Function plain = compile({x}, {main_path + shortcut}, {"use_channel_blocks"});
  int with_residual = 0;
  for (const ApplyNode* conv : blocked_convs(fused)) {
    if (!conv->attrs().get_bool("has_residual")) continue;
    ++with_residual;
    EXPECT_EQ(conv->provenance().site.line, static_cast<std::uint32_t>(shortcut_line));
  }
  EXPECT_EQ(with_residual, 1);
  expect_same_results({&plain, &fused}, random_tensor(DType::Float32, {1, 8, 5, 6}, 6));
}

// Near-misses: the output read twice, and a clamp before the add (the epilogue adds the
// residual before it clamps).
TEST(FuseConvResidual, LeavesNearMisses) {
  Variable x = tensor4(DType::Float32, "x");
  Variable stem = relu(with_bias(conv2d(x, conv_weights(8, 8, 1), kSame), 8, 2));
  Variable body = conv2d(stem, conv_weights(8, 8, 3), kSame);
  Variable twice = body + stem;
  Variable clamped = relu(conv2d(stem, conv_weights(8, 8, 4), kSame)) + stem;
  const std::vector<Variable> outputs{twice, body, clamped};
  Function fused = compile({x}, outputs);
  Function plain = compile({x}, outputs, {"use_channel_blocks"});
  for (const ApplyNode* conv : blocked_convs(fused)) {
    EXPECT_FALSE(conv->attrs().get_bool("has_residual")) << conv->op_string();
  }
  EXPECT_EQ(op_counts(fused).at("Add"), 2);
  expect_same_results({&plain, &fused}, random_tensor(DType::Float32, {2, 8, 5, 5}, 7));
}

// ---- fuse_conv_clamp ----

TEST(FuseConvClamp, FoldsBothBoundsIntoTheConvolution) {
  Variable x = tensor4(DType::Float32, "x");
  const int conv_line = __LINE__ + 1;
  Variable y = conv2d(x, conv_weights(8, 8, 1), kSame);
  Variable out = minimum(maximum(y, 0.0), 0.5);
  Function fused = compile({x}, {out});
  Function unfused = compile({x}, {out}, {"fuse_conv_clamp"});
  Function plain = compile({x}, {out}, {"use_channel_blocks"});
  const std::vector<const ApplyNode*> convs = blocked_convs(fused);
  ASSERT_EQ(convs.size(), 1u);
  EXPECT_EQ(convs[0]->attrs().get_double("lower"), 0.0);
  EXPECT_EQ(convs[0]->attrs().get_double("upper"), 0.5);
  EXPECT_EQ(convs[0]->provenance().site.line, static_cast<std::uint32_t>(conv_line));
  EXPECT_EQ(op_counts(fused),
            (std::map<std::string, int>{
                {"BlockedConv", 1}, {"FromChannelBlocks", 1}, {"ToChannelBlocks", 1}}));
  // Without the rule the clamp is still one node: fuse_clamps makes it a Clip, on blocked data.
  EXPECT_EQ(op_counts(unfused).at("Clip"), 1);
  EXPECT_EQ(op_counts(unfused).at("FromChannelBlocks"), 1);
  expect_same_results({&plain, &fused, &unfused}, random_tensor(DType::Float32, {2, 8, 4, 6}, 8));
}

// Near-misses: the output read twice; max after min (the epilogue clamps below first); a NaN
// bound.
TEST(FuseConvClamp, LeavesNearMisses) {
  Variable x = tensor4(DType::Float32, "x");
  Variable y = conv2d(x, conv_weights(8, 8, 1), kSame);
  Variable reversed = maximum(minimum(conv2d(x, conv_weights(8, 8, 2), kSame), 0.5), 0.0);
  Variable not_a_number =
      maximum(conv2d(x, conv_weights(8, 8, 3), kSame), std::numeric_limits<double>::quiet_NaN());
  const std::vector<Variable> outputs{relu(y), y, reversed, not_a_number};
  Function fused = compile({x}, outputs);
  Function plain = compile({x}, outputs, {"use_channel_blocks"});
  std::vector<std::pair<double, double>> bounds;
  for (const ApplyNode* conv : blocked_convs(fused)) {
    bounds.emplace_back(conv->attrs().get_double("lower"), conv->attrs().get_double("upper"));
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::ranges::sort(bounds);
  // Only reversed's minimum joined its convolution.
  EXPECT_EQ(bounds,
            (std::vector<std::pair<double, double>>{{-kInf, 0.5}, {-kInf, kInf}, {-kInf, kInf}}));
  EXPECT_EQ(op_counts(fused).at("Maximum"), 3);
  const std::vector<Tensor> expected = plain({random_tensor(DType::Float32, {1, 8, 4, 4}, 9)});
  const std::vector<Tensor> actual = fused({random_tensor(DType::Float32, {1, 8, 4, 4}, 9)});
  for (std::size_t i = 0; i < 3; ++i) EXPECT_TRUE(all_close(actual[i], expected[i], 1e-4, 1e-5));
}

// ---- the stage ----

TEST(ChannelBlockFusions, RunOnlyAfterUseChannelBlocks) {
  const std::vector<std::string_view> names = rewrite::default_rule_names();
  const auto position = [&](std::string_view name) {
    return std::ranges::find(names, name) - names.begin();
  };
  EXPECT_LT(position("use_channel_blocks"), position("fuse_conv_bias"));
  EXPECT_LT(position("fuse_conv_bias"), position("fuse_conv_residual"));
  EXPECT_LT(position("fuse_conv_residual"), position("fuse_conv_clamp"));
  EXPECT_LT(position("fuse_conv_clamp"), position("fuse_clamps"));

  Variable x = tensor4(DType::Float32, "x");
  Variable out = relu(with_bias(conv2d(x, conv_weights(8, 8, 1), kSame), 8, 2));
  const auto rows = [&](std::vector<std::string> excluded) {
    FunctionGraph graph = FunctionGraph::clone_of({x}, {out});
    FakeClock clock(1);
    rewrite::PipelineSettings settings;
    settings.excluded = excluded;
    settings.channel_block = 8;
    std::vector<std::string> names;
    const rewrite::RewriteReport report = rewrite::run_default_pipeline(graph, clock, settings);
    for (const rewrite::RuleReport& rule : report.rules) {
      names.push_back(rule.name + ":" + std::to_string(rule.changes));
    }
    return names;
  };
  EXPECT_EQ(rows({}), (std::vector<std::string>{"merge_duplicate_nodes:0",
                                                "hoist_loop_invariants:0",
                                                "merge_sibling_loops:0",
                                                "push_out_sequence_work:0",
                                                "keep_last_steps_only:0",
                                                "push_out_accumulated_products:0",
                                                "dot_to_dot22:0",
                                                "gemm_from_scaled_sum:0",
                                                "gemm_through_row_split:0",
                                                "transpose_through_dot22:0",
                                                "fuse_gemm_gelu:0",
                                                "crop_idle_kernel_taps:0",
                                                "pool_before_pointwise_conv:0",
                                                "use_channel_blocks:3",
                                                "fuse_conv_bias:1",
                                                "fuse_conv_residual:0",
                                                "fuse_conv_clamp:1",
                                                "fuse_batch_norm_relu:0",
                                                "fuse_join_batch_norm:0",
                                                "specialize_pow:0",
                                                "fuse_clamps:0",
                                                "fuse_layer_norms:0",
                                                "fuse_elementwise:0",
                                                "fold_constant_layouts:1",
                                                "use_inplace:0"}));
  // Excluding the layout change leaves nothing to fuse: the stage does not run, and the plain
  // convolution's bias add and relu become one Composite instead.
  EXPECT_EQ(
      rows({"use_channel_blocks"}),
      (std::vector<std::string>{
          "merge_duplicate_nodes:0", "hoist_loop_invariants:0", "merge_sibling_loops:0",
          "push_out_sequence_work:0", "keep_last_steps_only:0", "push_out_accumulated_products:0",
          "dot_to_dot22:0", "gemm_from_scaled_sum:0", "gemm_through_row_split:0",
          "transpose_through_dot22:0", "fuse_gemm_gelu:0", "crop_idle_kernel_taps:0",
          "pool_before_pointwise_conv:0", "specialize_pow:0", "fuse_clamps:0", "fuse_layer_norms:0",
          "fuse_elementwise:1", "fold_constant_layouts:0", "use_inplace:1"}));
  EXPECT_EQ(rows({"fuse_channel_block_ops"}).size(), 20u);
}

}  // namespace
}  // namespace tscope
