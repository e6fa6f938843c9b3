// SPDX-License-Identifier: Apache-2.0
// The training ops on channel-blocked data (BlockedConvGradI, BlockedConvGradW,
// BlockedBatchNormTrain, BlockedBatchNormGrad, BlockedMaxPoolGrad) against the plain ops they
// stand for, fast kernels against reference kernels, on both blocks (8 and 16 channels), and
// their type rules' errors. Operands are graph inputs read plain, so the rewrite leaves the plain
// ops alone and the tests build the blocked nodes themselves.
#include "conv_test_util.h"
#include "tscope/ops/channel_blocks.h"

namespace tscope {
namespace {
using testing::all_close;
using testing::fast_matches_reference;
using testing::impls_of;
using testing::random_tensor;
using testing::run_graph;
using testing::shape_constant;
using testing::throws_naming;

Variable to_blocks(const Variable& x, std::int64_t block) {
  return apply_op1(op_def("ToChannelBlocks"), {x}, {{"block", block}},
                   std::source_location::current());
}
Variable from_blocks(const Variable& x, std::int64_t block) {
  return apply_op1(op_def("FromChannelBlocks"), {x}, {{"block", block}},
                   std::source_location::current());
}

// `attrs` plus the block (and in_blocked when given).
Attrs with_block(Attrs attrs, std::int64_t block) {
  attrs.set("block", block);
  return attrs;
}

struct ConvCase {
  Dims x;
  Dims w;
  ConvOptions options;
};

TEST(BlockedTrainingOps, ConvGradientsMatchThePlainOps) {
  const std::vector<ConvCase> cases = {
      {{2, 32, 9, 7}, {16, 32, 3, 3}, {.padding = Padding::symmetric({1, 1})}},
      {{2, 16, 10, 9}, {32, 16, 3, 3}, {.strides = {2, 2}, .padding = Padding::symmetric({1, 1})}},
      {{2, 16, 8, 8}, {16, 16, 1, 1}, {.strides = {2, 2}}}};
  std::uint64_t seed = 1;
  for (const ConvCase& c : cases) {
    for (const std::int64_t block : {8, 16}) {
      SCOPED_TRACE(c.x.to_string() + " block " + std::to_string(block));
      Variable x = tensor4(DType::Float32, "x");
      Variable w = tensor4(DType::Float32, "w");
      Variable dy = tensor4(DType::Float32, "dy");
      const Variable y = conv2d(x, w, c.options);
      const Attrs attrs = y.owner()->attrs();
      const Variable plain_dx = conv_grad_inputs(w, dy, shape_constant(c.x), c.options);
      const Variable plain_dw = conv_grad_weights(x, dy, shape_constant(c.w), c.options);
      const Variable blocked_dx = from_blocks(
          apply_op1(op_def("BlockedConvGradI"), {w, to_blocks(dy, block), shape_constant(c.x)},
                    with_block(attrs, block), std::source_location::current()),
          block);
      const Variable blocked_dw =
          apply_op1(op_def("BlockedConvGradW"),
                    {to_blocks(x, block), to_blocks(dy, block), shape_constant(c.w)},
                    with_block(attrs, block), std::source_location::current());
      const Tensor x_value = random_tensor(DType::Float32, c.x, seed++);
      const Tensor w_value = random_tensor(DType::Float32, c.w, seed++);
      const std::vector<Tensor> plain_y = run_graph({x, w}, {y}, {x_value, w_value});
      const Tensor dy_value = random_tensor(DType::Float32, plain_y[0].shape(), seed++);
      const std::vector<Variable> inputs{x, w, dy};
      const std::vector<Tensor> values{x_value, w_value, dy_value};
      const std::vector<Tensor> out =
          run_graph(inputs, {blocked_dx, plain_dx, blocked_dw, plain_dw}, values);
      EXPECT_TRUE(all_close(out[0], out[1], 1e-5, 1e-5));
      EXPECT_TRUE(all_close(out[2], out[3], 1e-5, 1e-4));
      EXPECT_TRUE(fast_matches_reference(inputs, {blocked_dx, blocked_dw}, values, 1e-5, 1e-4));
      EXPECT_EQ(impls_of(inputs, {blocked_dx}, values, "BlockedConvGradI"), "dnnl");
    }
  }
}

// Attr winograd: 3x3 stride-1 gradients on 16-channel blocks run oneDNN's Winograd where it has
// one (the direct kernel elsewhere), against the plain ops and the reference kernels, with weights
// and gradients of a trained network's scale (Winograd's error grows with the products it sums).
TEST(BlockedTrainingOps, WinogradConvGradientsMatchThePlainOps) {
  const Dims x_shape{2, 32, 12, 10};
  const Dims w_shape{16, 32, 3, 3};
  const ConvOptions same{.padding = Padding::symmetric({1, 1})};
  Variable x = tensor4(DType::Float32, "x");
  Variable w = tensor4(DType::Float32, "w");
  Variable dy = tensor4(DType::Float32, "dy");
  Attrs attrs = with_block(conv2d(x, w, same).owner()->attrs(), 16);
  attrs.set("winograd", true);
  const Variable blocked_dx = from_blocks(
      apply_op1(op_def("BlockedConvGradI"), {w, to_blocks(dy, 16), shape_constant(x_shape)}, attrs,
                std::source_location::current()),
      16);
  const Variable blocked_dw = apply_op1(
      op_def("BlockedConvGradW"), {to_blocks(x, 16), to_blocks(dy, 16), shape_constant(w_shape)},
      attrs, std::source_location::current());
  EXPECT_NE(blocked_dw.owner()->op_string().find(",nChw16c,winograd}"), std::string::npos);
  const Variable plain_dx = conv_grad_inputs(w, dy, shape_constant(x_shape), same);
  const Variable plain_dw = conv_grad_weights(x, dy, shape_constant(w_shape), same);
  for (std::uint64_t seed : {50, 53}) {
    const std::vector<Variable> inputs{x, w, dy};
    const std::vector<Tensor> values{
        random_tensor(DType::Float32, x_shape, seed),
        random_tensor(DType::Float32, w_shape, seed + 1, -0.1, 0.1),
        random_tensor(DType::Float32, {2, 16, 12, 10}, seed + 2, -0.1, 0.1)};
    const std::vector<Tensor> out =
        run_graph(inputs, {blocked_dx, plain_dx, blocked_dw, plain_dw}, values);
    EXPECT_TRUE(all_close(out[0], out[1], 1e-4, 1e-5));
    EXPECT_TRUE(all_close(out[2], out[3], 1e-4, 1e-5));
    EXPECT_TRUE(fast_matches_reference(inputs, {blocked_dx, blocked_dw}, values, 1e-4, 1e-5));
  }
  // Not on 8-channel blocks, nor on a stride-2 window.
  for (const std::int64_t block : {8, 16}) {
    Attrs wrong = with_block(
        conv2d(x, w, block == 8 ? same : ConvOptions{.strides = {2, 2}, .padding = same.padding})
            .owner()
            ->attrs(),
        block);
    wrong.set("winograd", true);
    EXPECT_TRUE(throws_naming(
        [&] {
          (void)apply_op1(op_def("BlockedConvGradW"),
                          {to_blocks(x, block), to_blocks(dy, block), shape_constant(w_shape)},
                          wrong, std::source_location::current());
        },
        ErrorKind::InvalidArgument, {"BlockedConvGradW", "winograd"}));
  }
}

// A first layer's image has fewer channels than a block: ConvGradW reads it plain.
TEST(BlockedTrainingOps, ConvGradWeightsReadsAPlainImage) {
  for (const std::int64_t block : {8, 16}) {
    Variable x = tensor4(DType::Float32, "x");
    Variable dy = tensor4(DType::Float32, "dy");
    const ConvOptions options{.strides = {2, 2}, .padding = Padding::symmetric({3, 3})};
    const Dims w_shape{16, 3, 7, 7};
    const Attrs attrs = conv2d(x, tensor4(DType::Float32, "w"), options).owner()->attrs();
    Attrs blocked_attrs = with_block(attrs, block);
    blocked_attrs.set("in_blocked", false);
    const Variable blocked_dw =
        apply_op1(op_def("BlockedConvGradW"), {x, to_blocks(dy, block), shape_constant(w_shape)},
                  blocked_attrs, std::source_location::current());
    EXPECT_NE(blocked_dw.owner()->op_string().find(",nchw+nChw"), std::string::npos);
    const Variable plain_dw = conv_grad_weights(x, dy, shape_constant(w_shape), options);
    const std::vector<Tensor> values{random_tensor(DType::Float32, {2, 3, 20, 18}, 40),
                                     random_tensor(DType::Float32, {2, 16, 10, 9}, 41)};
    const std::vector<Tensor> out = run_graph({x, dy}, {blocked_dw, plain_dw}, values);
    EXPECT_TRUE(all_close(out[0], out[1], 1e-5, 1e-4));
    EXPECT_TRUE(fast_matches_reference({x, dy}, {blocked_dw}, values, 1e-5, 1e-4));
  }
}

TEST(BlockedTrainingOps, BatchNormAndItsGradientMatchThePlainOps) {
  for (const std::int64_t block : {8, 16}) {
    Variable x = tensor4(DType::Float32, "x");
    Variable dy = tensor4(DType::Float32, "dy");
    Variable gamma = vector(DType::Float32, "gamma");
    Variable beta = vector(DType::Float32, "beta");
    const Attrs attrs{{"epsilon", 1e-5}};
    const std::vector<Variable> plain = apply_op(op_def("BatchNormTrain"), {x, gamma, beta}, attrs,
                                                 std::source_location::current());
    const std::vector<Variable> plain_grad =
        apply_op(op_def("BatchNormGrad"), {x, dy, gamma, plain[1], plain[2]}, attrs,
                 std::source_location::current());
    const std::vector<Variable> blocked =
        apply_op(op_def("BlockedBatchNormTrain"), {to_blocks(x, block), gamma, beta},
                 with_block(attrs, block), std::source_location::current());
    const std::vector<Variable> blocked_grad =
        apply_op(op_def("BlockedBatchNormGrad"),
                 {to_blocks(x, block), to_blocks(dy, block), gamma, blocked[1], blocked[2]},
                 with_block(attrs, block), std::source_location::current());
    EXPECT_EQ(blocked[0].owner()->op_string(),
              "BatchNormTrain{epsilon=1e-05,nChw" + std::to_string(block) + "c}");
    const std::vector<Variable> inputs{x, dy, gamma, beta};
    const std::vector<Tensor> values{random_tensor(DType::Float32, {3, 32, 5, 7}, 50),
                                     random_tensor(DType::Float32, {3, 32, 5, 7}, 51),
                                     random_tensor(DType::Float32, {32}, 52),
                                     random_tensor(DType::Float32, {32}, 53)};
    const std::vector<Variable> outputs{
        from_blocks(blocked[0], block),      blocked[1],      blocked[2],
        from_blocks(blocked_grad[0], block), blocked_grad[1], blocked_grad[2]};
    const std::vector<Tensor> out = run_graph(inputs, outputs, values);
    const std::vector<Tensor> expected = run_graph(
        inputs, {plain[0], plain[1], plain[2], plain_grad[0], plain_grad[1], plain_grad[2]},
        values);
    for (std::size_t i = 0; i < out.size(); ++i) {
      EXPECT_TRUE(all_close(out[i], expected[i], 1e-4, 1e-5)) << "output " << i;
    }
    EXPECT_TRUE(fast_matches_reference(inputs, outputs, values, 1e-4, 1e-5));
    EXPECT_EQ(impls_of(inputs, {outputs[3]}, values, "BlockedBatchNormGrad"), "dnnl");
  }
}

TEST(BlockedTrainingOps, MaxPoolGradientMatchesThePlainOp) {
  for (const std::int64_t block : {8, 16}) {
    Variable x = tensor4(DType::Float32, "x");
    Variable dy = tensor4(DType::Float32, "dy");
    const Variable pooled =
        max_pool2d(x, {.kernel = {3, 3}, .strides = {2, 2}, .padding = Padding::symmetric({1, 1})});
    const Attrs attrs = pooled.owner()->attrs();
    const Variable plain =
        apply_op1(op_def("MaxPoolGrad"), {x, dy}, attrs, std::source_location::current());
    const Variable blocked = from_blocks(
        apply_op1(op_def("BlockedMaxPoolGrad"), {to_blocks(x, block), to_blocks(dy, block)},
                  with_block(attrs, block), std::source_location::current()),
        block);
    const std::vector<Tensor> values{random_tensor(DType::Float32, {2, 32, 11, 9}, 60),
                                     random_tensor(DType::Float32, {2, 32, 6, 5}, 61)};
    const std::vector<Tensor> out = run_graph({x, dy}, {blocked, plain}, values);
    // Overlapping windows add their dy in another order.
    EXPECT_TRUE(all_close(out[0], out[1], 1e-6, 1e-7));
    EXPECT_TRUE(fast_matches_reference({x, dy}, {blocked}, values, 1e-6, 1e-7));
  }
}

TEST(BlockedTrainingOps, TypeRulesNameTheProblem) {
  Variable w = tensor4(DType::Float32, "w");
  Variable plain_dy = tensor4(DType::Float32, "dy");
  const Attrs attrs = with_block(conv2d(tensor4(DType::Float32, "x"), w).owner()->attrs(), 8);
  EXPECT_TRUE(throws_naming(
      [&] {
        (void)apply_op1(op_def("BlockedConvGradI"), {w, plain_dy, shape_constant({1, 8, 4, 4})},
                        attrs, std::source_location::current());
      },
      ErrorKind::ShapeMismatch, {"BlockedConvGradI", "(N, C/8, H, W, 8)"}));
  Variable x64 = tensor(DType::Float64, {1, 2, 4, 4, 8}, "x64");
  Variable gamma = vector(DType::Float32, "gamma");
  EXPECT_TRUE(throws_naming(
      [&] {
        (void)apply_op(op_def("BlockedBatchNormTrain"), {x64, gamma, gamma},
                       Attrs{{"epsilon", 1e-5}, {"block", std::int64_t{8}}},
                       std::source_location::current());
      },
      ErrorKind::TypeMismatch, {"BlockedBatchNormTrain", "float64"}));
  Variable blocked = tensor(DType::Float32, {1, 2, 4, 4, 8}, "blocked");
  Variable short_gamma = constant(Tensor::zeros(DType::Float32, {12}), "gamma12");
  EXPECT_TRUE(throws_naming(
      [&] {
        (void)apply_op(op_def("BlockedBatchNormTrain"), {blocked, short_gamma, short_gamma},
                       Attrs{{"epsilon", 1e-5}, {"block", std::int64_t{8}}},
                       std::source_location::current());
      },
      ErrorKind::ShapeMismatch, {"BlockedBatchNormTrain", "16 channels"}));
}

}  // namespace
}  // namespace tscope
