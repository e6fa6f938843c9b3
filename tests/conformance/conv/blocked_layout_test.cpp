// SPDX-License-Identifier: Apache-2.0
// The channel-blocked ops: ToChannelBlocks / FromChannelBlocks / PackConvWeights element by
// element and against oneDNN's format tags (the fast kernels are oneDNN reorders), BlockedConv and
// the blocked pools against the plain ops they stand for, fast against reference kernels, and the
// type rules' errors. Weights here are graph inputs, so the rewrite leaves the plain ops alone and
// the tests build the blocked nodes themselves. Each kernel runs on both blocks (8 and 16
// channels) whatever the machine's preferred one.
#include <cmath>
#include <limits>
#include <optional>

#include "conv_test_util.h"
#include "tscope/ops/channel_blocks.h"

namespace tscope {
namespace {
using testing::all_close;
using testing::fast_matches_reference;
using testing::random_tensor;
using testing::run_graph;
using testing::throws_naming;

constexpr double kInf = std::numeric_limits<double>::infinity();

Variable op1(std::string_view name, std::vector<Variable> inputs, Attrs attrs) {
  return apply_op1(op_def(name), std::move(inputs), std::move(attrs),
                   std::source_location::current());
}

Variable to_blocks(const Variable& x, std::int64_t block = 8) {
  return op1("ToChannelBlocks", {x}, {{"block", block}});
}
Variable from_blocks(const Variable& x, std::int64_t block = 8) {
  return op1("FromChannelBlocks", {x}, {{"block", block}});
}
// The layout's block is the second character group of its name: OIhw16i16o, Ohwi16o, Goihw16g.
std::int64_t block_of(const std::string& layout) {
  return layout.find("16") != std::string::npos ? 16 : 8;
}
Variable pack(const Variable& w, std::int64_t groups, const std::string& layout) {
  return op1("PackConvWeights", {w},
             {{"block", block_of(layout)}, {"groups", groups}, {"layout", layout}});
}

TEST(ChannelBlockReorders, ElementsLandWhereTheLayoutSays) {
  Variable x = tensor4(DType::Float32, "x");
  const Tensor value = random_tensor(DType::Float32, {2, 16, 3, 5}, 1);
  const std::vector<Tensor> out =
      run_graph({x}, {to_blocks(x), from_blocks(to_blocks(x))}, {value});
  ASSERT_EQ(out[0].shape(), (Dims{2, 2, 3, 5, 8}));
  // y[n, cb, h, w, i] = x[n, cb * 8 + i, h, w]
  EXPECT_EQ(out[0].at((((1 * 2 + 1) * 3 + 2) * 5 + 4) * 8 + 3),
            value.at(((1 * 16 + 11) * 3 + 2) * 5 + 4));
  EXPECT_TRUE(all_close(out[1], value, 0, 0));
  EXPECT_TRUE(
      fast_matches_reference({x}, {to_blocks(x), from_blocks(to_blocks(x))}, {value}, 0, 0));
  // Blocks of 16: y[n, cb, h, w, i] = x[n, cb * 16 + i, h, w]
  const Tensor wide = random_tensor(DType::Float32, {2, 32, 3, 5}, 2);
  const std::vector<Tensor> out16 =
      run_graph({x}, {to_blocks(x, 16), from_blocks(to_blocks(x, 16), 16)}, {wide});
  ASSERT_EQ(out16[0].shape(), (Dims{2, 2, 3, 5, 16}));
  EXPECT_EQ(out16[0].at((((1 * 2 + 1) * 3 + 2) * 5 + 4) * 16 + 13),
            wide.at(((1 * 32 + 29) * 3 + 2) * 5 + 4));
  EXPECT_TRUE(all_close(out16[1], wide, 0, 0));
  EXPECT_TRUE(fast_matches_reference({x}, {to_blocks(x, 16), from_blocks(to_blocks(x, 16), 16)},
                                     {wide}, 0, 0));
}

// Channels that fill no whole block are padded with zeros up to one; FromChannelBlocks then gives
// the padded channels, of which the first are the value's. The output's memory is taken from
// released blocks, so zeros in the padding come from the reorder, not from fresh pages.
TEST(ChannelBlockReorders, ChannelsBeyondTheLastBlockAreZeroPadding) {
  Variable x = tensor4(DType::Float32, "x");
  constexpr std::int64_t kChannels = 436;  // 440 on blocks of 8, 448 on blocks of 16
  const Tensor value = random_tensor(DType::Float32, {2, kChannels, 6, 7}, 3);
  const std::vector<double> given = value.to_doubles();
  for (const std::int64_t block : {8, 16}) {
    const std::int64_t padded = (kChannels + block - 1) / block * block;
    // Leave a released block of the output's size full of non-zeros for the reorder to reuse.
    (void)Tensor::full(DType::Float32, {2, padded / block, 6, 7, block}, 7.0);
    const std::vector<Tensor> out =
        run_graph({x}, {to_blocks(x, block), from_blocks(to_blocks(x, block), block)}, {value});
    ASSERT_EQ(out[0].shape(), (Dims{2, padded / block, 6, 7, block}));
    ASSERT_EQ(out[1].shape(), (Dims{2, padded, 6, 7}));
    const std::vector<double> plain = out[1].to_doubles();
    std::int64_t wrong = 0;
    for (std::int64_t n = 0; n < 2; ++n) {
      for (std::int64_t c = 0; c < padded; ++c) {
        for (std::int64_t p = 0; p < 42; ++p) {
          const double got = plain[static_cast<std::size_t>((n * padded + c) * 42 + p)];
          const double expected =
              c < kChannels ? given[static_cast<std::size_t>((n * kChannels + c) * 42 + p)] : 0.0;
          if (got != expected) ++wrong;
        }
      }
    }
    EXPECT_EQ(wrong, 0) << block;
    EXPECT_TRUE(fast_matches_reference({x}, {to_blocks(x, block)}, {value}, 0, 0)) << block;
  }
}

// The reference packing loops are checked against oneDNN's own reorder into the format tag of the
// same name (the fast kernel), so BlockedConv hands oneDNN the bytes its tag describes.
TEST(ChannelBlockReorders, PackedWeightsMatchOneDnnFormatTags) {
  struct Case {
    std::string layout;
    Dims w;
    std::int64_t groups;
    Dims packed;
  };
  const std::vector<Case> cases = {{"OIhw8i8o", {16, 24, 3, 3}, 1, {2, 3, 3, 3, 8, 8}},
                                   {"Ohwi8o", {16, 3, 7, 7}, 1, {2, 7, 7, 3, 8}},
                                   {"Goihw8g", {24, 1, 3, 3}, 24, {3, 3, 3, 8}},
                                   {"OIhw16i16o", {32, 16, 3, 3}, 1, {2, 1, 3, 3, 16, 16}},
                                   {"Ohwi16o", {16, 3, 7, 7}, 1, {1, 7, 7, 3, 16}},
                                   {"Goihw16g", {32, 1, 3, 3}, 32, {2, 3, 3, 16}},
                                   {"gOIhw8i8o", {32, 8, 3, 3}, 4, {4, 1, 1, 3, 3, 8, 8}},
                                   {"gOIhw16i16o", {64, 16, 3, 3}, 2, {2, 2, 1, 3, 3, 16, 16}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.layout);
    Variable w = tensor(DType::Float32, c.w, "w");  // packing needs static weight shapes
    const Tensor value = random_tensor(DType::Float32, c.w, 2);
    EXPECT_TRUE(fast_matches_reference({w}, {pack(w, c.groups, c.layout)}, {value}, 0, 0));
    EXPECT_EQ(run_graph({w}, {pack(w, c.groups, c.layout)}, {value})[0].shape(), c.packed);
  }
  // One element each, spelled out: w[o, c, h, w] with o = 13, c = 2 or 10, h = 1, w = 2.
  Variable w = tensor(DType::Float32, {16, 24, 3, 3}, "w");
  const Tensor oihw = random_tensor(DType::Float32, {16, 24, 3, 3}, 3);
  const Tensor blocked = run_graph({w}, {pack(w, 1, "OIhw8i8o")}, {oihw})[0];
  EXPECT_EQ(blocked.at(((((1 * 3 + 1) * 3 + 1) * 3 + 2) * 8 + 2) * 8 + 5),
            oihw.at(((13 * 24 + 10) * 3 + 1) * 3 + 2));
  const Tensor rgb = random_tensor(DType::Float32, {16, 3, 7, 7}, 4);
  Variable w_rgb = tensor(DType::Float32, {16, 3, 7, 7}, "w_rgb");
  const Tensor stem = run_graph({w_rgb}, {pack(w_rgb, 1, "Ohwi8o")}, {rgb})[0];
  EXPECT_EQ(stem.at((((1 * 7 + 1) * 7 + 2) * 3 + 2) * 8 + 5),
            rgb.at(((13 * 3 + 2) * 7 + 1) * 7 + 2));
  // OIhw16i16o: w[o, c, h, w] with o = 29 (block 1, lane 13), c = 21 (block 1, lane 5).
  Variable w32 = tensor(DType::Float32, {32, 32, 3, 3}, "w32");
  const Tensor oihw32 = random_tensor(DType::Float32, {32, 32, 3, 3}, 5);
  const Tensor blocked16 = run_graph({w32}, {pack(w32, 1, "OIhw16i16o")}, {oihw32})[0];
  EXPECT_EQ(blocked16.at(((((1 * 2 + 1) * 3 + 1) * 3 + 2) * 16 + 5) * 16 + 13),
            oihw32.at(((29 * 32 + 21) * 3 + 1) * 3 + 2));
}

TEST(ChannelBlockHelpers, WeightLayoutFollowsChannelsAndGroups) {
  EXPECT_EQ(blocked_weight_layout(64, 128, 1, 8), "OIhw8i8o");
  EXPECT_EQ(blocked_weight_layout(3, 64, 1, 8), "Ohwi8o");  // an RGB stem reads plain input
  EXPECT_EQ(blocked_weight_layout(1, 8, 1, 8), "Ohwi8o");
  EXPECT_EQ(blocked_weight_layout(144, 144, 144, 8), "Goihw8g");
  EXPECT_EQ(blocked_weight_layout(12, 16, 1, 8), std::nullopt);   // C neither < 8 nor a multiple
  EXPECT_EQ(blocked_weight_layout(16, 12, 1, 8), std::nullopt);   // O not a multiple of 8
  EXPECT_EQ(blocked_weight_layout(12, 12, 12, 8), std::nullopt);  // depthwise, C not a multiple
  EXPECT_EQ(blocked_weight_layout(32, 64, 32, 8), std::nullopt);  // grouped, C/G = 1
  EXPECT_EQ(blocked_weight_layout(64, 64, 4, 8), "gOIhw8i8o");    // 16 channels per group
  EXPECT_EQ(blocked_weight_layout(64, 64, 16, 8), std::nullopt);  // 4 channels per group
  EXPECT_EQ(blocked_weight_layout(64, 96, 4, 8), "gOIhw8i8o");    // 16 in, 24 out per group
  EXPECT_EQ(blocked_weight_layout(3, 3, 3, 8), std::nullopt);
  // Blocks of 16: MobileNet-v2's 24 channels do not fit, a 12-channel input now reads plain.
  EXPECT_EQ(blocked_weight_layout(64, 128, 1, 16), "OIhw16i16o");
  EXPECT_EQ(blocked_weight_layout(12, 16, 1, 16), "Ohwi16o");
  EXPECT_EQ(blocked_weight_layout(144, 144, 144, 16), "Goihw16g");
  EXPECT_EQ(blocked_weight_layout(24, 24, 24, 16), std::nullopt);
  EXPECT_EQ(blocked_weight_layout(400, 400, 25, 16), "gOIhw16i16o");  // RegNet's group width 16
  EXPECT_EQ(blocked_weight_layout(64, 64, 8, 16), std::nullopt);      // 8 channels per group
  EXPECT_EQ(blocked_weight_layout(64, 96, 4, 16), std::nullopt);      // 24 out per group
  EXPECT_EQ(blocked_weight_layout(32, 24, 1, 16), std::nullopt);
  EXPECT_EQ(blocked_weight_layout(24, 32, 1, 16), std::nullopt);
  EXPECT_TRUE(throws_naming([] { (void)blocked_weight_layout(64, 64, 1, 4); },
                            ErrorKind::InvalidArgument, {"block 4"}));
  EXPECT_TRUE(preferred_channel_block() == 8 || preferred_channel_block() == 16);
  EXPECT_TRUE(input_runs_blocked("OIhw8i8o"));
  EXPECT_TRUE(input_runs_blocked("Goihw8g"));
  EXPECT_TRUE(input_runs_blocked("gOIhw16i16o"));
  EXPECT_FALSE(input_runs_blocked("Ohwi8o"));
  EXPECT_TRUE(input_runs_blocked("OIhw16i16o"));
  EXPECT_FALSE(input_runs_blocked("Ohwi16o"));
  EXPECT_TRUE(throws_naming([] { (void)input_runs_blocked("nchw"); }, ErrorKind::InvalidArgument,
                            {"unknown weight layout 'nchw'"}));
  EXPECT_EQ(blocked_conv_attrs({{"groups", std::int64_t{1}}}, "OIhw16i16o", 32, 32).get_int("block"),
            16);
  const Attrs attrs = blocked_conv_attrs({{"groups", std::int64_t{1}}}, "Ohwi8o", 3, 16,
                                         {.has_bias = true, .lower = 0, .upper = 6});
  EXPECT_EQ(attrs.get_int("groups"), 1);
  EXPECT_EQ(attrs.get_string("layout"), "Ohwi8o");
  EXPECT_EQ(attrs.get_int("block"), 8);
  EXPECT_FALSE(attrs.get_bool("in_blocked"));
  EXPECT_EQ(attrs.get_int("channels"), 3);
  EXPECT_EQ(attrs.get_int("out_channels"), 16);
  EXPECT_TRUE(attrs.get_bool("has_bias"));
  EXPECT_FALSE(attrs.get_bool("has_residual"));
  EXPECT_EQ(attrs.get_double("lower"), 0.0);
  EXPECT_EQ(attrs.get_double("upper"), 6.0);
}

struct ConvCase {
  std::string name;
  Dims x;
  Dims w;
  ConvOptions options;
  bool bias;
  double lower;
  double upper;
};

// The layout the compiler would choose at `block` (blocked_weight_layout), if any.
std::optional<std::string> layout_for(const ConvCase& c, std::int64_t block) {
  return blocked_weight_layout(c.x[1], c.w[0], c.options.groups, block);
}

// BlockedConv(ToChannelBlocks(x), PackConvWeights(w), b[, ToChannelBlocks(residual)]) read back,
// and clamp(conv(x, w) + b [+ residual]).
std::pair<Variable, Variable> blocked_and_plain(const ConvCase& c,
                                                const std::string& layout,
                                                const Variable& x,
                                                const Variable& w,
                                                const Variable& b,
                                                const Variable* residual = nullptr) {
  Variable plain = conv2d(x, w, c.options);
  const std::int64_t block = block_of(layout);
  const bool in_blocked = input_runs_blocked(layout);
  Attrs attrs = blocked_conv_attrs(plain.owner()->attrs(), layout, c.x[1], c.w[0],
                                   {.has_bias = c.bias,
                                    .has_residual = residual != nullptr,
                                    .lower = c.lower,
                                    .upper = c.upper});
  std::vector<Variable> inputs{in_blocked ? to_blocks(x, block) : x,
                               pack(w, c.options.groups, layout)};
  if (c.bias) {
    inputs.push_back(b);
    plain = plain + dimshuffle(b, {kNewAxis, 0, kNewAxis, kNewAxis});
  }
  if (residual != nullptr) {
    inputs.push_back(to_blocks(*residual, block));
    plain = plain + *residual;
  }
  if (std::isfinite(c.lower)) plain = maximum(plain, c.lower);
  if (std::isfinite(c.upper)) plain = minimum(plain, c.upper);
  return {from_blocks(op1("BlockedConv", std::move(inputs), std::move(attrs)), block), plain};
}

TEST(BlockedConv, MatchesConvWithBiasAndClamp) {
  const std::vector<ConvCase> cases = {
      {"3x3",
       {2, 16, 9, 11},
       {16, 16, 3, 3},
       {.padding = Padding::symmetric({1, 1})},
       true,
       0,
       kInf},
      {"3x3 s2",
       {1, 16, 10, 9},
       {24, 16, 3, 3},
       {.strides = {2, 2}, .padding = Padding::symmetric({1, 1})},
       true,
       -kInf,
       kInf},
      {"1x1 s2", {2, 32, 7, 7}, {16, 32, 1, 1}, {.strides = {2, 2}}, false, -kInf, kInf},
      {"stem 7x7 C=3",
       {2, 3, 19, 17},
       {8, 3, 7, 7},
       {.strides = {2, 2}, .padding = Padding::symmetric({3, 3})},
       true,
       0,
       kInf},
      {"depthwise s1 relu6",
       {1, 24, 8, 9},
       {24, 1, 3, 3},
       {.padding = Padding::symmetric({1, 1}), .groups = 24},
       true,
       0,
       6},
      {"depthwise s2 dilated",
       {2, 16, 11, 10},
       {16, 1, 3, 3},
       {.strides = {2, 2},
        .padding = Padding::symmetric({2, 2}),
        .dilations = {2, 2},
        .groups = 16},
       false,
       -kInf,
       0.25},
      // MobileNet-v2's pointwise convolutions (jit_1x1) with ReLU6, and ResNet's 64-channel 3x3.
      {"1x1 pointwise relu6", {1, 32, 7, 9}, {16, 32, 1, 1}, {}, true, 0, 6},
      {"1x1 projection", {2, 16, 5, 5}, {24, 16, 1, 1}, {}, true, -kInf, kInf},
      {"3x3 64 channels",
       {1, 64, 8, 7},
       {64, 64, 3, 3},
       {.padding = Padding::symmetric({1, 1})},
       true,
       0,
       kInf},
      // A lower bound other than ReLU's (a clip up to the largest float) and 'same' padding.
      {"same lower -0.5",
       {2, 8, 6, 5},
       {8, 8, 3, 3},
       {.padding = Padding::same()},
       true,
       -0.5,
       kInf},
      {"stem C=1 asymmetric pads",
       {1, 1, 9, 8},
       {16, 1, 3, 3},
       {.strides = {2, 2}, .padding = Padding::explicit_pads({0, 1}, {1, 0})},
       false,
       -kInf,
       kInf},
      // Cases with a layout at block 16 as well (AVX-512's nChw16c).
      {"3x3 32 -> 16 relu6",
       {2, 32, 7, 6},
       {16, 32, 3, 3},
       {.padding = Padding::symmetric({1, 1})},
       true,
       0,
       6},
      {"depthwise 32 s2",
       {1, 32, 9, 9},
       {32, 1, 3, 3},
       {.strides = {2, 2}, .padding = Padding::symmetric({1, 1}), .groups = 32},
       true,
       0,
       kInf},
      {"stem C=12 -> 32", {1, 12, 8, 9}, {32, 12, 3, 3}, {}, true, -kInf, kInf},
      // Grouped: 2 groups of 16 -> 32 channels (both blocks), 4 groups of 8 -> 8 (block 8).
      {"grouped 3x3 s2",
       {2, 32, 9, 8},
       {64, 16, 3, 3},
       {.strides = {2, 2}, .padding = Padding::symmetric({1, 1}), .groups = 2},
       true,
       0,
       kInf},
      {"grouped 8 per group",
       {1, 32, 7, 7},
       {32, 8, 3, 3},
       {.padding = Padding::symmetric({1, 1}), .groups = 4},
       false,
       -kInf,
       kInf},
  };
  int blocked_cases = 0;
  for (const ConvCase& c : cases) {
    for (std::int64_t block : kChannelBlockSizes) {
      const std::optional<std::string> layout = layout_for(c, block);
      if (!layout) continue;
      SCOPED_TRACE(c.name + " " + *layout);
      ++blocked_cases;
      Variable x = tensor4(DType::Float32, "x");
      Variable w = tensor(DType::Float32, c.w, "w");
      Variable b = vector(DType::Float32, "b");
      const auto [blocked, plain] = blocked_and_plain(c, *layout, x, w, b);
      const std::vector<Tensor> values{random_tensor(DType::Float32, c.x, 5),
                                       random_tensor(DType::Float32, c.w, 6),
                                       random_tensor(DType::Float32, {c.w[0]}, 7)};
      const std::vector<Tensor> out = run_graph({x, w, b}, {blocked, plain}, values);
      EXPECT_TRUE(all_close(out[0], out[1], 1e-5, 1e-5));
      EXPECT_TRUE(fast_matches_reference({x, w, b}, {blocked}, values, 1e-5, 1e-5));
    }
  }
  // Every case runs at block 8 but "stem C=12 -> 32"; ten run at block 16.
  EXPECT_EQ(blocked_cases, 15 + 10);
}

// A skip connection's add (oneDNN's binary post-op) comes after the bias and before the clamp.
TEST(BlockedConv, AddsTheResidualBeforeTheClamp) {
  const std::vector<std::pair<ConvCase, Dims>> cases = {
      {{"3x3 relu",
        {2, 16, 6, 7},
        {16, 16, 3, 3},
        {.padding = Padding::symmetric({1, 1})},
        true,
        0,
        kInf},
       {2, 16, 6, 7}},
      {{"1x1 s2 projection",
        {1, 16, 7, 5},
        {24, 16, 1, 1},
        {.strides = {2, 2}},
        false,
        -kInf,
        kInf},
       {1, 24, 4, 3}},
      {{"depthwise relu6",
        {1, 8, 5, 5},
        {8, 1, 3, 3},
        {.padding = Padding::symmetric({1, 1}), .groups = 8},
        true,
        0,
        6},
       {1, 8, 5, 5}},
  };
  for (const auto& [c, y_shape] : cases) {
    SCOPED_TRACE(c.name);
    Variable x = tensor4(DType::Float32, "x");
    Variable w = tensor(DType::Float32, c.w, "w");
    Variable b = vector(DType::Float32, "b");
    Variable r = tensor4(DType::Float32, "r");
    const auto [blocked, plain] = blocked_and_plain(c, layout_for(c, 8).value(), x, w, b, &r);
    const std::vector<Tensor> values{
        random_tensor(DType::Float32, c.x, 11), random_tensor(DType::Float32, c.w, 12),
        random_tensor(DType::Float32, {c.w[0]}, 13), random_tensor(DType::Float32, y_shape, 14)};
    const std::vector<Tensor> out = run_graph({x, w, b, r}, {blocked, plain}, values);
    EXPECT_TRUE(all_close(out[0], out[1], 1e-5, 1e-5));
    EXPECT_TRUE(fast_matches_reference({x, w, b, r}, {blocked}, values, 1e-5, 1e-5));
  }
  {  // The same on 16-channel blocks: a ResNet block's 3x3 convolution with its skip connection.
    const ConvCase c{"3x3 16 relu", {2, 16, 6, 7}, {16, 16, 3, 3},
                     {.padding = Padding::symmetric({1, 1})}, true, 0, kInf};
    Variable x = tensor4(DType::Float32, "x");
    Variable w = tensor(DType::Float32, c.w, "w");
    Variable b = vector(DType::Float32, "b");
    Variable r = tensor4(DType::Float32, "r");
    const auto [blocked, plain] = blocked_and_plain(c, "OIhw16i16o", x, w, b, &r);
    const std::vector<Tensor> values{
        random_tensor(DType::Float32, c.x, 15), random_tensor(DType::Float32, c.w, 16),
        random_tensor(DType::Float32, {16}, 17), random_tensor(DType::Float32, c.x, 18)};
    const std::vector<Tensor> out = run_graph({x, w, b, r}, {blocked, plain}, values);
    EXPECT_TRUE(all_close(out[0], out[1], 1e-5, 1e-5));
    EXPECT_TRUE(fast_matches_reference({x, w, b, r}, {blocked}, values, 1e-5, 1e-5));
  }
  // A residual of another shape than the output is the type rule's to name.
  Variable x = constant(Tensor::zeros(DType::Float32, {1, 16, 6, 6}), "x");
  Variable w = constant(Tensor::zeros(DType::Float32, {16, 16, 3, 3}), "w");
  const Attrs attrs =
      blocked_conv_attrs(conv2d(x, w).owner()->attrs(), "OIhw8i8o", 16, 16, {.has_residual = true});
  EXPECT_TRUE(throws_naming(
      [&] {
        (void)op1("BlockedConv", {to_blocks(x), pack(w, 1, "OIhw8i8o"), to_blocks(x)}, attrs);
      },
      ErrorKind::ShapeMismatch, {"BlockedConv", "residual (1, 2, 6, 6, 8)", "(1, 2, 4, 4, 8)"}));
}

// Layout "oihw" (block 0): plain data in and out, weights as they are, bias and clamp fused.
TEST(BlockedConv, PlainLayoutMatchesConvWithBias) {
  const ConvCase c{"plain 3x3 s2", {2, 12, 9, 8}, {20, 12, 3, 3},
                   {.strides = {2, 2}, .padding = Padding::symmetric({1, 1})}, true, -kInf, kInf};
  Variable x = tensor4(DType::Float32, "x");
  Variable w = tensor(DType::Float32, c.w, "w");
  Variable b = vector(DType::Float32, "b");
  Variable plain = conv2d(x, w, c.options) + dimshuffle(b, {kNewAxis, 0, kNewAxis, kNewAxis});
  const Attrs attrs = blocked_conv_attrs(conv2d(x, w, c.options).owner()->attrs(), "oihw", 12, 20,
                                         {.has_bias = true});
  EXPECT_EQ(attrs.get_int("block"), 0);
  EXPECT_FALSE(attrs.get_bool("in_blocked"));
  Variable fused = op1("BlockedConv", {x, w, b}, attrs);
  EXPECT_EQ(fused.rank(), 4);
  const std::vector<Tensor> values{random_tensor(DType::Float32, c.x, 31),
                                   random_tensor(DType::Float32, c.w, 32),
                                   random_tensor(DType::Float32, {20}, 33)};
  const std::vector<Tensor> out = run_graph({x, w, b}, {fused, plain}, values);
  EXPECT_TRUE(all_close(out[0], out[1], 1e-5, 1e-5));
  EXPECT_TRUE(fast_matches_reference({x, w, b}, {fused}, values, 1e-5, 1e-5));
  Attrs wrong_block = attrs;
  wrong_block.set("block", std::int64_t{8});
  EXPECT_TRUE(throws_naming([&] { (void)op1("BlockedConv", {x, w, b}, wrong_block); },
                            ErrorKind::InvalidArgument, {"BlockedConv", "block 8", "oihw"}));
}

// One compiled BlockedConv called with input shapes that change between calls (batch, then
// spatial extents, then back): a node keeps the geometry of its last call's shapes, and each call
// must match the plain convolution of its own shapes.
TEST(BlockedConv, CallsOfChangingShapesMatchConv) {
  const ConvCase c{"3x3 s2",
                   {2, 16, 9, 8},
                   {16, 16, 3, 3},
                   {.strides = {2, 2}, .padding = Padding::symmetric({1, 1})},
                   true,
                   0,
                   kInf};
  Variable x = tensor4(DType::Float32, "x");
  Variable w = tensor(DType::Float32, c.w, "w");
  Variable b = vector(DType::Float32, "b");
  const auto [blocked, plain] = blocked_and_plain(c, "OIhw8i8o", x, w, b);
  Function f = function({x, w, b}, {blocked, plain});
  const Tensor weights = random_tensor(DType::Float32, c.w, 41);
  const Tensor bias = random_tensor(DType::Float32, {16}, 42);
  std::uint64_t seed = 43;
  for (const Dims& shape :
       {Dims{2, 16, 9, 8}, Dims{3, 16, 9, 8}, Dims{3, 16, 12, 5}, Dims{2, 16, 9, 8}}) {
    SCOPED_TRACE(shape.to_string());
    const std::vector<Tensor> out =
        f({random_tensor(DType::Float32, shape, seed++), weights, bias});
    EXPECT_EQ(out[0].shape(), out[1].shape());
    EXPECT_TRUE(all_close(out[0], out[1], 1e-5, 1e-5));
  }
}

TEST(BlockedConv, PrintedNameShowsLayoutAndEpilogue) {
  const ConvCase c{"relu6", {1, 8, 4, 4}, {8, 1, 3, 3}, {.groups = 8}, true, 0, 6};
  Variable x = tensor4(DType::Float32, "x");
  const auto [blocked, plain] = blocked_and_plain(c, "Goihw8g", x, tensor(DType::Float32, c.w, "w"),
                                                  vector(DType::Float32, "b"));
  EXPECT_EQ(blocked.owner()->input(0).owner()->op_string(),
            "Conv2d{stride=(1,1),pad=(0,0),dilation=(1,1),groups=8,nChw8c,bias,clip(0,6)}");
  const ConvCase stem{"stem", {1, 3, 4, 4}, {16, 3, 3, 3}, {}, false, 0, kInf};
  const auto [stem_blocked, stem_plain] = blocked_and_plain(
      stem, "Ohwi16o", x, tensor(DType::Float32, stem.w, "w"), vector(DType::Float32, "b"));
  EXPECT_EQ(stem_blocked.owner()->input(0).owner()->op_string(),
            "Conv2d{stride=(1,1),pad=(0,0),dilation=(1,1),groups=1,nchw>nChw16c,relu}");
}

TEST(BlockedPools, MatchPlainPools) {
  struct PoolCase {
    std::string op;
    PoolOptions options;
  };
  const std::vector<PoolCase> cases = {
      {"max", {.kernel = {3, 3}, .strides = {2, 2}, .padding = Padding::symmetric({1, 1})}},
      {"max", {.kernel = {2, 2}}},
      {"avg",
       {.kernel = {3, 3},
        .strides = {1, 1},
        .padding = Padding::symmetric({1, 1}),
        .include_pad = true}},
      {"avg", {.kernel = {3, 3}, .strides = {2, 2}, .padding = Padding::symmetric({1, 1})}},
      // ONNX's ceil_mode arrives as extra padding at the end: the blocked pools must divide and
      // clip those windows exactly as the plain ones (include_pad or not).
      {"max",
       {.kernel = {3, 3}, .strides = {2, 2}, .padding = Padding::explicit_pads({0, 0}, {1, 2})}},
      {"avg",
       {.kernel = {3, 3},
        .strides = {2, 2},
        .padding = Padding::explicit_pads({1, 0}, {2, 1}),
        .include_pad = true}},
      {"avg",
       {.kernel = {3, 3}, .strides = {2, 2}, .padding = Padding::explicit_pads({1, 0}, {2, 1})}},
      {"avg",
       {.kernel = {2, 3}, .strides = {2, 1}, .padding = Padding::same(), .include_pad = true}},
      {"max", {.kernel = {3, 2}, .strides = {3, 2}, .padding = Padding::same()}},
  };
  for (const PoolCase& c : cases) {
    for (std::int64_t block : kChannelBlockSizes) {
      SCOPED_TRACE(c.op + " block " + std::to_string(block));
      Variable x = tensor4(DType::Float32, "x");
      Variable plain = c.op == "max" ? max_pool2d(x, c.options) : avg_pool2d(x, c.options);
      Attrs attrs = plain.owner()->attrs();
      attrs.set("block", block);
      Variable blocked =
          from_blocks(op1(c.op == "max" ? "BlockedMaxPool" : "BlockedAvgPool",
                          {to_blocks(x, block)}, attrs),
                      block);
      const std::vector<Tensor> values{random_tensor(DType::Float32, {2, 32, 11, 9}, 8)};
      const std::vector<Tensor> out = run_graph({x}, {blocked, plain}, values);
      EXPECT_TRUE(all_close(out[0], out[1], 1e-6, 1e-7));
      EXPECT_TRUE(fast_matches_reference({x}, {blocked}, values, 1e-6, 1e-7));
      if (block == 16) {
        EXPECT_NE(blocked.owner()->input(0).owner()->op_string().find(",nChw16c}"),
                  std::string::npos);
      }
    }
  }
}

TEST(ChannelBlockErrors, NameTheProblem) {
  Variable x12 = constant(Tensor::zeros(DType::Float32, {1, 12, 4, 4}), "x12");
  Variable x64 = tensor4(DType::Float64, "x64");
  EXPECT_TRUE(throws_naming([&] { (void)to_blocks(x64); }, ErrorKind::TypeMismatch,
                            {"ToChannelBlocks", "float32", "float64"}));
  Variable plain = tensor4(DType::Float32, "plain");
  EXPECT_TRUE(throws_naming([&] { (void)from_blocks(plain); }, ErrorKind::ShapeMismatch,
                            {"FromChannelBlocks", "(N, C/8, H, W, 8)"}));
  Variable w = constant(Tensor::zeros(DType::Float32, {12, 8, 3, 3}), "w");
  EXPECT_TRUE(throws_naming([&] { (void)pack(w, 1, "OIhw8i8o"); }, ErrorKind::ShapeMismatch,
                            {"PackConvWeights", "(12, 8, 3, 3)", "O is not a multiple of 8"}));
  EXPECT_TRUE(throws_naming([&] { (void)pack(w, 1, "OIhw4i4o"); }, ErrorKind::InvalidArgument,
                            {"unknown weight layout 'OIhw4i4o'"}));
  EXPECT_TRUE(throws_naming([&] { (void)pack(w, 1, "OIhw16i16o"); }, ErrorKind::ShapeMismatch,
                            {"PackConvWeights", "O is not a multiple of 16"}));
  EXPECT_TRUE(throws_naming([&] { (void)to_blocks(x12, 4); }, ErrorKind::InvalidArgument,
                            {"ToChannelBlocks", "block 4", "8 or 16"}));
  Variable blocked8 = to_blocks(constant(Tensor::zeros(DType::Float32, {1, 16, 2, 2}), "x16"));
  EXPECT_TRUE(throws_naming([&] { (void)from_blocks(blocked8, 16); }, ErrorKind::ShapeMismatch,
                            {"FromChannelBlocks", "(N, C/16, H, W, 16)", "(1, 2, 2, 2, 8)"}));
  Variable x = tensor4(DType::Float32, "x");
  Variable w8 = constant(Tensor::zeros(DType::Float32, {8, 8, 3, 3}), "w8");
  // the packed weights hold 8 input channels
  Attrs attrs = blocked_conv_attrs(conv2d(x, w8).owner()->attrs(), "OIhw8i8o", 16, 8);
  EXPECT_TRUE(throws_naming(
      [&] {
        (void)op1("BlockedConv", {to_blocks(x), pack(w8, 1, "OIhw8i8o")}, attrs);
      },
      ErrorKind::ShapeMismatch, {"BlockedConv", "packed weights", "16 -> 8 channels"}));
}

TEST(ChannelBlockErrors, PackedWeightsMustSuitTheLayout) {
  Variable w = constant(Tensor::zeros(DType::Float32, {16, 1, 3, 3}), "w");
  EXPECT_TRUE(throws_naming([&] { (void)pack(w, 8, "Goihw8g"); }, ErrorKind::ShapeMismatch,
                            {"PackConvWeights", "(16, 1, 3, 3)", "depthwise", "groups C"}));
  Variable w12 = constant(Tensor::zeros(DType::Float32, {16, 12, 3, 3}), "w12");
  EXPECT_TRUE(throws_naming([&] { (void)pack(w12, 1, "OIhw8i8o"); }, ErrorKind::ShapeMismatch,
                            {"PackConvWeights", "C a multiple of 8"}));
  Variable w3 = constant(Tensor::zeros(DType::Float32, {16, 3, 3}), "w3");
  EXPECT_TRUE(throws_naming([&] { (void)pack(w3, 1, "Ohwi8o"); }, ErrorKind::TypeMismatch,
                            {"PackConvWeights", "OIHW", "rank 3"}));
  Variable w64 = constant(Tensor::zeros(DType::Float64, {16, 8, 3, 3}), "w64");
  EXPECT_TRUE(throws_naming([&] { (void)pack(w64, 1, "OIhw8i8o"); }, ErrorKind::TypeMismatch,
                            {"PackConvWeights", "float64"}));
  Variable w16 = constant(Tensor::zeros(DType::Float32, {16, 8, 3, 3}), "w16");
  EXPECT_TRUE(throws_naming(
      [&] {
        (void)op1("PackConvWeights", {w16},
                  {{"block", 16}, {"groups", 1}, {"layout", std::string("OIhw8i8o")}});
      },
      ErrorKind::InvalidArgument, {"PackConvWeights", "OIhw8i8o", "block 16"}));
}

TEST(ChannelBlockErrors, BlockedConvChecksItsInputsAndAttrs) {
  Variable x = tensor4(DType::Float32, "x");
  Variable w = constant(Tensor::zeros(DType::Float32, {16, 8, 3, 3}), "w");
  Variable packed = pack(w, 1, "OIhw8i8o");
  const Attrs attrs = blocked_conv_attrs(conv2d(x, w).owner()->attrs(), "OIhw8i8o", 8, 16,
                                         {.has_bias = true, .lower = 0});
  Variable b = vector(DType::Float32, "b");
  // Plain (rank 4) data where the layout reads blocked data.
  EXPECT_TRUE(throws_naming(
      [&] {
        (void)op1("BlockedConv", {x, packed, b}, attrs);
      },
      ErrorKind::ShapeMismatch, {"BlockedConv", "(N, C/8, H, W, 8)"}));
  Variable x64 = tensor(DType::Float64, {1, 1, 5, 5, 8}, "x64");
  EXPECT_TRUE(throws_naming(
      [&] {
        (void)op1("BlockedConv", {x64, packed, b}, attrs);
      },
      ErrorKind::TypeMismatch, {"BlockedConv", "input 0", "float64"}));
  EXPECT_TRUE(throws_naming(
      [&] {
        (void)op1("BlockedConv", {to_blocks(x), packed}, attrs);
      },
      ErrorKind::InvalidArgument, {"BlockedConv", "has_bias=true", "3 inputs"}));
  Variable b5 = constant(Tensor::zeros(DType::Float32, {5}), "b5");
  EXPECT_TRUE(throws_naming(
      [&] {
        (void)op1("BlockedConv", {to_blocks(x), packed, b5}, attrs);
      },
      ErrorKind::ShapeMismatch, {"BlockedConv", "bias (5,)", "16 output channels"}));
  // Packed weights of another layout's shape: Ohwi8o's (O/8, kh, kw, C, 8) read as OIhw8i8o.
  Variable stem = pack(w, 1, "Ohwi8o");
  EXPECT_TRUE(throws_naming(
      [&] {
        (void)op1("BlockedConv", {to_blocks(x), stem, b}, attrs);
      },
      ErrorKind::ShapeMismatch, {"BlockedConv", "packed weights"}));
  Attrs plain_input = attrs;
  plain_input.set("in_blocked", false);  // OIhw8i8o reads blocked input
  EXPECT_TRUE(throws_naming(
      [&] {
        (void)op1("BlockedConv", {x, packed, b}, plain_input);
      },
      ErrorKind::InvalidArgument, {"BlockedConv", "in_blocked", "OIhw8i8o"}));
  Attrs block16 = attrs;
  block16.set("block", std::int64_t{16});
  EXPECT_TRUE(throws_naming(
      [&] {
        (void)op1("BlockedConv", {to_blocks(x), packed, b}, block16);
      },
      ErrorKind::InvalidArgument, {"BlockedConv", "block 16"}));
  // Winograd asks for OIhw16i16o and a 3x3 stride-1 window: not 8-channel blocks.
  Attrs winograd = attrs;
  winograd.set("winograd", true);
  EXPECT_TRUE(throws_naming(
      [&] {
        (void)op1("BlockedConv", {to_blocks(x), packed, b}, winograd);
      },
      ErrorKind::InvalidArgument, {"BlockedConv", "winograd", "OIhw8i8o", "3x3"}));
}

// Winograd on a hand-built BlockedConv whose packed weights are not a constant (transformed again
// on every call) and on one whose weights are (transformed once), against the reference kernel,
// at 16-channel blocks; where oneDNN has no Winograd the direct convolution runs instead.
TEST(BlockedConv, WinogradMatchesTheReference) {
  Variable x = tensor4(DType::Float32, "x");
  Variable w_input = tensor(DType::Float32, {32, 16, 3, 3}, "w");
  const Tensor w_value = random_tensor(DType::Float32, {32, 16, 3, 3}, 21, -0.1, 0.1);
  const ConvOptions same{.padding = Padding::symmetric({1, 1})};
  Attrs attrs = blocked_conv_attrs(conv2d(x, w_input, same).owner()->attrs(), "OIhw16i16o", 16,
                                   32, {.has_bias = true, .lower = 0});
  attrs.set("winograd", true);
  Variable b = constant(random_tensor(DType::Float32, {32}, 22), "b");
  for (const Variable& w : {w_input, constant(w_value, "w_const")}) {
    Variable y = from_blocks(op1("BlockedConv", {to_blocks(x, 16), pack(w, 1, "OIhw16i16o"), b},
                                 attrs),
                             16);
    EXPECT_NE(y.owner()->input(0).owner()->op_string().find("winograd"), std::string::npos);
    for (std::uint64_t seed : {23, 24}) {
      std::vector<Variable> inputs{x};
      std::vector<Tensor> values{random_tensor(DType::Float32, {2, 16, 8, 7}, seed)};
      if (w.kind() != VariableKind::Constant) {
        inputs.push_back(w);
        values.push_back(w_value);
      }
      EXPECT_TRUE(testing::fast_matches_reference(inputs, {y}, values, 1e-4, 1e-5));
    }
  }
}

TEST(ChannelBlockErrors, BlockedPoolsReadBlockedFloat32) {
  Variable x = tensor4(DType::Float32, "x");
  Attrs attrs = max_pool2d(x, {.kernel = {2, 2}}).owner()->attrs();
  attrs.set("block", std::int64_t{8});
  EXPECT_TRUE(throws_naming([&] { (void)op1("BlockedMaxPool", {x}, attrs); },
                            ErrorKind::ShapeMismatch, {"BlockedMaxPool", "(N, C/8, H, W, 8)"}));
  Variable x4 = tensor(DType::Float32, {1, 2, 6, 6, 4}, "x4");
  EXPECT_TRUE(throws_naming([&] { (void)op1("BlockedMaxPool", {x4}, attrs); },
                            ErrorKind::ShapeMismatch, {"BlockedMaxPool", "(1, 2, 6, 6, 4)"}));
  Variable x64 = tensor(DType::Float64, {1, 2, 6, 6, 8}, "x64");
  Attrs average = avg_pool2d(x, {.kernel = {2, 2}}).owner()->attrs();
  average.set("block", std::int64_t{8});
  EXPECT_TRUE(throws_naming([&] { (void)op1("BlockedAvgPool", {x64}, average); },
                            ErrorKind::TypeMismatch, {"BlockedAvgPool", "float64"}));
}

}  // namespace
}  // namespace tscope
