// SPDX-License-Identifier: Apache-2.0
// DenseNet's layers on the channel-blocked layout: a Join along the channel axis of blocked values
// that are whole blocks runs blocked (the Join of their blocks), an inference batch norm on
// blocked data runs as BlockedBatchNormInference, fuse_batch_norm_relu folds the ReLU after it
// into it and fuse_join_batch_norm the Join before it (the norm reads the Join's pieces). Each
// compiles to no reorder between the layers and computes what the plain graph computes, with the
// fast kernels and with the reference ones, at inference and in a training step; near-misses stay
// as they were. Also pool_before_pointwise_conv: an average pool after a 1x1 convolution
// (DenseNet's transition layers) runs before it, with the same results, and is left alone where
// it does not apply.
#include <map>
#include <string>
#include <vector>

#include "support/graph_counts.h"
#include "support/test_util.h"
#include "tscope/ops/channel_blocks.h"
#include "tscope/ops/registry.h"

namespace tscope {
namespace {
using testing::all_close;
using testing::op_counts;
using testing::random_tensor;

Variable weights(std::int64_t out, std::int64_t in, std::int64_t k, std::uint64_t seed) {
  return constant(random_tensor(DType::Float32, {out, in, k, k}, seed, -0.3, 0.3),
                  "w" + std::to_string(seed));
}

// An inference batch norm over `channels` with constant statistics (positive variances).
Variable norm(const Variable& x, std::int64_t channels, std::uint64_t seed) {
  const auto vector = [&](std::uint64_t offset, double low, double high) {
    return constant(random_tensor(DType::Float32, {channels}, seed + offset, low, high),
                    "bn" + std::to_string(seed) + "_" + std::to_string(offset));
  };
  return batch_norm_inference(x, vector(0, 0.5, 1.5), vector(1, -0.5, 0.5), vector(2, -0.3, 0.3),
                              vector(3, 0.5, 2.0));
}

Function compile(const Variable& x,
                 const Variable& out,
                 std::vector<std::string> excluded,
                 bool reference = false) {
  FunctionOptions options;
  options.channel_block = 8;
  options.excluded_rewrites = std::move(excluded);
  options.reference_kernels = reference;
  return function({x}, {out}, {}, options);
}

void expect_same_results(Function& f, Function& plain, const Tensor& value) {
  const std::vector<Tensor> expected = plain({value});
  const std::vector<Tensor> actual = f({value});
  ASSERT_EQ(actual.size(), 1u);
  EXPECT_TRUE(all_close(actual[0], expected[0], 1e-4, 1e-5));
}

std::vector<const ApplyNode*> nodes_of(const Function& f, std::string_view op) {
  std::vector<const ApplyNode*> found;
  for (const ApplyNode* node : f.graph().toposort()) {
    if (node->op().name == op) found.push_back(node);
  }
  return found;
}

// Two dense layers on a blocked stem: each concatenates the earlier features, normalises them
// (BatchNorm -> ReLU) and convolves; the block's output is the concatenation of all of them.
Variable dense_block(const Variable& x) {
  const Variable f0 = conv2d(x, weights(16, 3, 3, 1), {.padding = Padding::symmetric({1, 1})});
  const Variable f1 = conv2d(relu(norm(join(1, {f0}), 16, 10)), weights(8, 16, 1, 2));
  const Variable cat = join(1, {f0, f1});
  const Variable f2 = conv2d(relu(norm(cat, 24, 20)), weights(16, 24, 3, 3),
                             {.padding = Padding::symmetric({1, 1})});
  return global_avg_pool(relu(norm(join(1, {f0, f1, f2}), 40, 30)));
}

TEST(DenseBlocks, ConcatenationsAndNormsStayBlocked) {
  Variable x = tensor4(DType::Float32, "x");
  const Variable out = dense_block(x);
  Function blocked = compile(x, out, {});
  Function plain = compile(x, out, {"use_channel_blocks"});
  Function unfused = compile(x, out, {"fuse_batch_norm_relu", "fuse_join_batch_norm"});
  Function reference = compile(x, out, {}, true);

  const std::map<std::string, int> counts = op_counts(blocked);
  EXPECT_EQ(counts.at("BlockedBatchNormInference"), 3);
  EXPECT_FALSE(counts.contains("BatchNormInference"));
  EXPECT_FALSE(counts.contains("Maximum"));
  EXPECT_FALSE(counts.contains("ToChannelBlocks"));  // the stem reads plain RGB (Ohwi8o)
  EXPECT_EQ(counts.at("FromChannelBlocks"), 1);      // only before the global average pool
  EXPECT_FALSE(counts.contains("Join"));             // each norm reads its concatenation's pieces
  std::vector<int> pieces;
  for (const ApplyNode* bn : nodes_of(blocked, "BlockedBatchNormInference")) {
    EXPECT_TRUE(bn->attrs().get_bool("relu"));
    EXPECT_EQ(bn->attrs().get_int("block"), 8);
    EXPECT_EQ(bn->provenance().user_op, "batch_norm");
    pieces.push_back(bn->num_inputs() - 4);
  }
  EXPECT_EQ(pieces, (std::vector<int>{1, 2, 3}));
  // Without the rules the concatenations run as Joins of the blocks, and the ReLUs as their own
  // passes, on blocked data.
  for (const ApplyNode* join : nodes_of(unfused, "Join")) {
    EXPECT_EQ(join->output(0).rank(), 5);
    EXPECT_EQ(join->attrs().get_int("axis"), 1);
  }
  EXPECT_EQ(op_counts(unfused).at("Join"), 3);
  EXPECT_EQ(op_counts(unfused).at("Maximum"), 3);
  for (const ApplyNode* bn : nodes_of(unfused, "BlockedBatchNormInference")) {
    EXPECT_FALSE(bn->attrs().get_bool_or("relu", false));
  }

  for (const auto& [dims, seed] :
       std::vector<std::pair<Dims, std::uint64_t>>{{{2, 3, 9, 7}, 40}, {{1, 3, 16, 16}, 41}}) {
    const Tensor value = random_tensor(DType::Float32, dims, seed);
    expect_same_results(blocked, plain, value);
    expect_same_results(unfused, plain, value);
    expect_same_results(reference, plain, value);
  }
}

// On 16-channel blocks, with statistics that are shared variables (recomputed on every call, so a
// change between calls shows) and a concatenation of three pieces.
TEST(DenseBlocks, SixteenChannelBlocksAndSharedStatistics) {
  Variable x = tensor4(DType::Float32, "x");
  const Variable a = conv2d(x, weights(16, 3, 3, 1), {.padding = Padding::symmetric({1, 1})});
  const Variable b = conv2d(x, weights(32, 3, 1, 2));
  const Variable c = conv2d(x, weights(16, 3, 1, 3));
  const auto vector = [](std::uint64_t seed, double low, double high) {
    return shared(random_tensor(DType::Float32, {64}, seed, low, high), "s" + std::to_string(seed));
  };
  Variable gamma = vector(10, 0.5, 1.5);
  const Variable out =
      global_avg_pool(relu(batch_norm_inference(join(1, {a, b, c}), gamma, vector(11, -0.5, 0.5),
                                                vector(12, -0.3, 0.3), vector(13, 0.5, 2.0))));
  FunctionOptions options;
  options.channel_block = 16;
  Function blocked = function({x}, {out}, {}, options);
  options.reference_kernels = true;
  Function reference = function({x}, {out}, {}, options);
  options.reference_kernels = false;
  options.excluded_rewrites = {"use_channel_blocks"};
  Function plain = function({x}, {out}, {}, options);
  const std::vector<const ApplyNode*> norms = nodes_of(blocked, "BlockedBatchNormInference");
  ASSERT_EQ(norms.size(), 1u);
  EXPECT_EQ(norms[0]->num_inputs(), 7);  // a, the four vectors, b, c
  EXPECT_TRUE(norms[0]->attrs().get_bool("relu"));
  const Tensor value = random_tensor(DType::Float32, {2, 3, 6, 5}, 70);
  expect_same_results(blocked, plain, value);
  expect_same_results(reference, plain, value);
  gamma.set_value(random_tensor(DType::Float32, {64}, 14, -1.5, 1.5));
  expect_same_results(blocked, plain, value);
}

// A dense block's training step (shared weights, batch norms with the batch's statistics, their
// gradients): the concatenations run blocked in the forward pass, so the training norms after them
// do too, and the loss and every gradient match the plain graph's.
TEST(DenseBlocks, TrainingStepMatchesPlain) {
  Variable x = tensor4(DType::Float32, "x");
  const auto weights_of = [](std::int64_t out, std::int64_t in, std::int64_t k,
                             std::uint64_t seed) {
    return shared_fixed_shape(random_tensor(DType::Float32, {out, in, k, k}, seed, -0.3, 0.3),
                              "tw" + std::to_string(seed));
  };
  const auto train_norm = [](const Variable& value, std::int64_t channels, std::uint64_t seed) {
    const Variable gamma = shared_fixed_shape(
        random_tensor(DType::Float32, {channels}, seed, 0.5, 1.5), "g" + std::to_string(seed));
    const Variable beta = shared_fixed_shape(random_tensor(DType::Float32, {channels}, seed + 1),
                                             "b" + std::to_string(seed));
    return apply_op(op_def("BatchNormTrain"), {value, gamma, beta}, Attrs{{"epsilon", 1e-5}},
                    std::source_location::current())[0];
  };
  const Variable w0 = weights_of(16, 3, 3, 1);
  const Variable w1 = weights_of(16, 16, 1, 2);
  const Variable w2 = weights_of(16, 32, 3, 3);
  const Padding same = Padding::symmetric({1, 1});
  const Variable f0 = conv2d(x, w0, {.padding = same});
  const Variable f1 = conv2d(relu(train_norm(f0, 16, 10)), w1);
  const Variable f2 = conv2d(relu(train_norm(join(1, {f0, f1}), 32, 20)), w2, {.padding = same});
  const Variable top = relu(train_norm(join(1, {f0, f1, f2}), 48, 30));
  const Variable loss = mean(top * top);
  const std::vector<Variable> grads = grad(loss, {w0, w1, w2});
  std::vector<Variable> outputs{loss};
  outputs.insert(outputs.end(), grads.begin(), grads.end());
  FunctionOptions options;
  options.channel_block = 8;
  Function blocked = function({x}, outputs, {}, options);
  options.excluded_rewrites = {"use_channel_blocks"};
  Function plain = function({x}, outputs, {}, options);
  const std::map<std::string, int> counts = op_counts(blocked);
  EXPECT_EQ(counts.at("BlockedBatchNormTrain"), 3);
  EXPECT_EQ(counts.count("BatchNormTrain"), 0U);
  const Tensor value = random_tensor(DType::Float32, {4, 3, 8, 6}, 80);
  const std::vector<Tensor> expected = plain({value});
  const std::vector<Tensor> actual = blocked({value});
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_TRUE(all_close(actual[i], expected[i], 1e-4, 1e-4)) << "output " << i;
  }
}

// The ReLU stays separate when the norm's output has another reader or the bound is not 0; a
// concatenation with a piece that is not whole blocks (12 channels on blocks of 8) stays plain.
TEST(DenseBlocks, LeavesNearMisses) {
  Variable x = tensor4(DType::Float32, "x");
  const Variable f0 = conv2d(x, weights(16, 3, 3, 1), {.padding = Padding::symmetric({1, 1})});
  const Variable normed = norm(f0, 16, 10);
  const Variable shifted = maximum(norm(f0, 16, 20), 0.5);
  const Variable odd = conv2d(x, weights(12, 3, 1, 2));
  const Variable out =
      global_avg_pool(join(1, {relu(normed) + normed, shifted, join(1, {f0, odd})}));
  Function blocked = compile(x, out, {});
  Function plain = compile(x, out, {"use_channel_blocks"});
  const std::map<std::string, int> counts = op_counts(blocked);
  EXPECT_EQ(counts.at("BlockedBatchNormInference"), 2);
  for (const ApplyNode* bn : nodes_of(blocked, "BlockedBatchNormInference")) {
    EXPECT_FALSE(bn->attrs().get_bool_or("relu", false));
  }
  for (const ApplyNode* join : nodes_of(blocked, "Join")) EXPECT_EQ(join->output(0).rank(), 4);
  expect_same_results(blocked, plain, random_tensor(DType::Float32, {2, 3, 8, 6}, 50));
}

// ---- pool_before_pointwise_conv ----

Function compile_plain(const Variable& x, const Variable& out, bool move_pools) {
  FunctionOptions options;
  options.excluded_rewrites = {"use_channel_blocks"};
  if (!move_pools) options.excluded_rewrites.push_back("pool_before_pointwise_conv");
  return function({x}, {out}, {}, options);
}

struct PoolCase {
  std::string what;
  Dims input;
  PoolOptions pool;
};

class PoolBeforePointwiseConv : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolBeforePointwiseConv, PoolsFirstWithTheSameResults) {
  const PoolCase& c = GetParam();
  Variable x = tensor(DType::Float32, c.input, "x");
  const int conv_line = __LINE__ + 1;
  const Variable y = conv2d(x, weights(24, c.input[1], 1, 1));
  const Variable out = avg_pool2d(y, c.pool);
  Function moved = compile_plain(x, out, true);
  Function kept = compile_plain(x, out, false);
  const std::vector<const ApplyNode*> convs = nodes_of(moved, "Conv");
  ASSERT_EQ(convs.size(), 1u);
  EXPECT_EQ(convs[0]->input(0).owner()->op().name, "AveragePool");  // pooled first
  EXPECT_EQ(convs[0]->provenance().site.line, static_cast<std::uint32_t>(conv_line));
  EXPECT_EQ(moved.graph().outputs()[0].owner(), convs[0]);
  expect_same_results(moved, kept, random_tensor(DType::Float32, c.input, 60));
  // And on the blocked layout, where the moved pool runs on blocks too.
  FunctionOptions options;
  options.channel_block = 8;
  Function blocked = function({x}, {out}, {}, options);
  expect_same_results(blocked, kept, random_tensor(DType::Float32, c.input, 61));
}

INSTANTIATE_TEST_SUITE_P(
    Pools,
    PoolBeforePointwiseConv,
    ::testing::Values(PoolCase{"transition", {2, 16, 8, 8}, {.kernel = {2, 2}, .strides = {2, 2}}},
                      PoolCase{"odd_extent", {1, 8, 7, 9}, {.kernel = {2, 2}, .strides = {2, 2}}},
                      PoolCase{"padded_include_pad",
                               {2, 8, 6, 6},
                               {.kernel = {3, 3},
                                .strides = {2, 2},
                                .padding = Padding::symmetric({1, 1}),
                                .include_pad = true}},
                      PoolCase{"padded_ceil_mode",
                               {1, 16, 7, 7},
                               {.kernel = {3, 3},
                                .strides = {2, 2},
                                .padding = Padding::symmetric({1, 1}),
                                .ceil_mode = true}}),
    [](const ::testing::TestParamInfo<PoolCase>& info) { return info.param.what; });

// A convolution that is not pointwise (3x3, strided, padded), has a second reader or a bias add
// between it and the pool, or a pool that keeps the image's extent, stays as it was.
TEST(PoolBeforePointwiseConv, LeavesNearMisses) {
  Variable x = tensor(DType::Float32, {2, 8, 8, 8}, "x");
  const PoolOptions halve{.kernel = {2, 2}, .strides = {2, 2}};
  const Variable wide =
      avg_pool2d(conv2d(x, weights(8, 8, 3, 4), {.padding = Padding::symmetric({1, 1})}), halve);
  const Variable strided = avg_pool2d(conv2d(x, weights(8, 8, 1, 5), {.strides = {2, 2}}), halve);
  const Variable padded =
      avg_pool2d(conv2d(x, weights(8, 8, 1, 6), {.padding = Padding::symmetric({1, 1})}), halve);
  const Variable shared_out = conv2d(x, weights(8, 8, 1, 7));
  const Variable twice = avg_pool2d(shared_out, halve) + max_pool2d(shared_out, halve);
  const Variable biased =
      avg_pool2d(conv2d(x, weights(8, 8, 1, 8)) +
                     dimshuffle(constant(random_tensor(DType::Float32, {8}, 9), "b"),
                                {kNewAxis, 0, kNewAxis, kNewAxis}),
                 halve);
  const Variable same_extent =
      avg_pool2d(conv2d(x, weights(8, 8, 1, 10)),
                 {.kernel = {3, 3}, .strides = {1, 1}, .padding = Padding::symmetric({1, 1})});
  const Variable out = join(1, {wide, twice, biased});
  for (const Variable& case_out : {out, strided, padded, same_extent}) {
    Function moved = compile_plain(x, case_out, true);
    for (const ApplyNode* conv : nodes_of(moved, "Conv")) {
      const ApplyNode* producer = conv->input(0).owner();
      EXPECT_TRUE(producer == nullptr || producer->op().name != "AveragePool");
    }
    Function kept = compile_plain(x, case_out, false);
    expect_same_results(moved, kept, random_tensor(DType::Float32, {2, 8, 8, 8}, 62));
  }
}

}  // namespace
}  // namespace tscope
