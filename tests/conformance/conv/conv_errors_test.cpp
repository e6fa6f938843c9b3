// SPDX-License-Identifier: Apache-2.0
// Bad convolutions and poolings fail when the graph is built (static shapes) or when the node runs
// (shapes known only then), in both kernels, with messages that name the shapes involved.
#include "conv_test_util.h"

namespace tscope {
namespace {

using testing::throws_naming;

Variable f32(const Dims& dims) { return tensor(DType::Float32, dims, "v"); }

TEST(ConvErrors, ChannelMismatchNamesBothShapes) {
  EXPECT_TRUE(throws_naming([] { (void)conv2d(f32({2, 3, 5, 5}), f32({4, 2, 3, 3})); },
                            ErrorKind::ShapeMismatch,
                            {"Conv2d", "(2, 3, 5, 5)", "(4, 2, 3, 3)", "3 input channels"}));
  EXPECT_TRUE(throws_naming(
      [] { (void)conv3d(f32({1, 4, 3, 3, 3}), f32({2, 3, 1, 1, 1}), {.groups = 2}); },
      ErrorKind::ShapeMismatch, {"Conv3d", "(1, 4, 3, 3, 3)", "(2, 3, 1, 1, 1)", "groups=2"}));
}

TEST(ConvErrors, GroupsThatDoNotDivideTheChannels) {
  EXPECT_TRUE(throws_naming(
      [] { (void)conv2d(f32({1, 3, 5, 5}), f32({4, 1, 3, 3}), {.groups = 2}); },
      ErrorKind::ShapeMismatch, {"groups=2 does not divide the 3 input channels", "(1, 3, 5, 5)"}));
  EXPECT_TRUE(throws_naming(
      [] { (void)conv2d(f32({1, 4, 5, 5}), f32({3, 2, 3, 3}), {.groups = 2}); },
      ErrorKind::ShapeMismatch, {"groups=2 does not divide the 3 output channels", "(3, 2, 3, 3)"}));
  EXPECT_TRUE(throws_naming([] { (void)conv2d(f32({1, 4, 5, 5}), f32({4, 4, 3, 3}), {.groups = 0}); },
                            ErrorKind::InvalidArgument, {"groups must be >= 1"}));
}

TEST(ConvErrors, KernelBiggerThanThePaddedInput) {
  EXPECT_TRUE(throws_naming([] { (void)conv2d(f32({1, 1, 4, 6}), f32({1, 1, 5, 3})); },
                            ErrorKind::ShapeMismatch,
                            {"(1, 1, 4, 6)", "(1, 1, 5, 3)", "bigger than the padded input 4"}));
  // Dilation 2 stretches a 3-wide kernel to 5.
  EXPECT_TRUE(throws_naming(
      [] { (void)conv2d(f32({1, 1, 4, 6}), f32({1, 1, 3, 3}), {.dilations = {2, 1}}); },
      ErrorKind::ShapeMismatch, {"kernel extent 5", "dilation 2"}));
  // Padding makes room: 4 + 1 + 1 >= 5.
  EXPECT_EQ(conv2d(f32({1, 1, 4, 6}), f32({1, 1, 5, 3}), {.padding = Padding::symmetric({1, 0})})
                .type()
                .dims,
            (Dims{1, 1, 2, 4}));
}

TEST(ConvErrors, RanksDtypesAndOptions) {
  EXPECT_TRUE(throws_naming([] { (void)conv2d(f32({1, 3, 5}), f32({4, 3, 3, 3})); },
                            ErrorKind::TypeMismatch, {"rank 4", "(1, 3, 5)"}));
  EXPECT_TRUE(throws_naming(
      [] { (void)conv2d(f32({1, 3, 5, 5}), tensor(DType::Float64, {4, 3, 3, 3}, "w")); },
      ErrorKind::TypeMismatch, {"float32", "float64"}));
  EXPECT_TRUE(throws_naming(
      [] { (void)conv2d(tensor(DType::Int32, {1, 3, 5, 5}, "x"), tensor(DType::Int32, {4, 3, 3, 3}, "w")); },
      ErrorKind::TypeMismatch, {"float dtype"}));
  EXPECT_TRUE(throws_naming([] { (void)conv2d(f32({1, 3, 5, 5}), f32({4, 3, 3, 3}), {.strides = {1}}); },
                            ErrorKind::InvalidArgument, {"strides has 1 entries for 2 spatial axes"}));
  EXPECT_TRUE(throws_naming(
      [] { (void)conv2d(f32({1, 3, 5, 5}), f32({4, 3, 3, 3}), {.strides = {1, 0}}); },
      ErrorKind::InvalidArgument, {"strides (1, 0) must be >= 1"}));
  EXPECT_TRUE(throws_naming(
      [] {
        (void)conv2d(f32({1, 3, 5, 5}), f32({4, 3, 3, 3}), {.padding = Padding::symmetric({-1, 0})});
      },
      ErrorKind::InvalidArgument, {"pads_begin (-1, 0) must be >= 0"}));
  EXPECT_TRUE(throws_naming(
      [] {
        (void)conv2d(f32({1, 3, 5, 5}), f32({4, 3, 3, 3}),
                     {.padding = {Padding::Mode::Same, {1, 1}, {1, 1}}});
      },
      ErrorKind::InvalidArgument, {"padding 'same' takes no explicit pads"}));
}

TEST(ConvErrors, GradientOpsCheckDyAndTheShapeInput) {
  Variable w = f32({4, 3, 3, 3});
  EXPECT_TRUE(throws_naming(
      [&] { (void)conv_grad_inputs(w, f32({2, 4, 4, 4}), testing::shape_constant({2, 3, 7, 7})); },
      ErrorKind::ShapeMismatch, {"Conv2dGradI", "dy (2, 4, 4, 4)", "(2, 4, 5, 5)"}));
  EXPECT_TRUE(throws_naming(
      [&] { (void)conv_grad_weights(f32({2, 3, 7, 7}), f32({2, 4, 5, 5}), testing::shape_constant({4, 3, 3})); },
      ErrorKind::TypeMismatch, {"Conv2dGradW", "3 entries; expected 4"}));
}

TEST(ConvErrors, RunTimeShapesAreCheckedByBothKernels) {
  // Nothing is known statically, so only the kernels can see the mismatch.
  Variable x = tensor4(DType::Float32, "x");
  Variable w = tensor4(DType::Float32, "w");
  Variable y = conv2d(x, w, {.groups = 2});
  for (bool reference : {false, true}) {
    FunctionOptions options;
    options.reference_kernels = reference;
    Function f = function({x, w}, {y}, {}, options);
    const auto call = [&](const Dims& xs, const Dims& ws) {
      return [&f, xs, ws] {
        (void)f({Tensor::zeros(DType::Float32, xs), Tensor::zeros(DType::Float32, ws)});
      };
    };
    EXPECT_TRUE(throws_naming(call({1, 4, 5, 5}, {2, 3, 3, 3}), ErrorKind::ShapeMismatch,
                              {"(1, 4, 5, 5)", "(2, 3, 3, 3)", "4 input channels"}));
    EXPECT_TRUE(throws_naming(call({1, 3, 5, 5}, {2, 1, 3, 3}), ErrorKind::ShapeMismatch,
                              {"groups=2 does not divide the 3 input channels", "(1, 3, 5, 5)"}));
    EXPECT_TRUE(throws_naming(call({1, 4, 2, 5}, {2, 2, 3, 3}), ErrorKind::ShapeMismatch,
                              {"(1, 4, 2, 5)", "(2, 2, 3, 3)", "bigger than the padded input"}));
    try {
      call({1, 4, 2, 5}, {2, 2, 3, 3})();
    } catch (const Error& error) {
      ASSERT_FALSE(error.context().empty());
      EXPECT_NE(error.context().front().find("Conv2d{"), std::string::npos) << error.what();
    }
  }
}

TEST(PoolErrors, PadsKernelAndRank) {
  EXPECT_TRUE(throws_naming(
      [] { (void)max_pool2d(f32({1, 1, 5, 5}), {.kernel = {2, 2}, .padding = Padding::symmetric({2, 0})}); },
      ErrorKind::InvalidArgument, {"MaxPool2d", "pads (2, 0) and (2, 0) must be smaller than the kernel (2, 2)"}));
  EXPECT_TRUE(throws_naming([] { (void)avg_pool2d(f32({1, 1, 3, 5}), {.kernel = {4, 2}}); },
                            ErrorKind::ShapeMismatch, {"AvgPool2d", "(1, 1, 3, 5)", "bigger than the padded input 3"}));
  EXPECT_TRUE(throws_naming([] { (void)max_pool3d(f32({1, 1, 5, 5}), {.kernel = {2, 2, 2}}); },
                            ErrorKind::TypeMismatch, {"(1, 1, 5, 5)", "rank 5"}));
  EXPECT_TRUE(throws_naming([] { (void)max_pool2d(f32({1, 1, 5, 5}), {.kernel = {2}}); },
                            ErrorKind::InvalidArgument, {"kernel has 1 entries for 2 spatial axes"}));
  EXPECT_TRUE(throws_naming(
      [] { (void)max_pool_grad(f32({1, 1, 4, 4}), f32({1, 1, 3, 2}), {.kernel = {2, 2}}); },
      ErrorKind::ShapeMismatch, {"MaxPool2dGrad", "dy (1, 1, 3, 2)", "(1, 1, 2, 2)"}));
  EXPECT_TRUE(throws_naming([] { (void)global_avg_pool(f32({3, 4})); }, ErrorKind::TypeMismatch,
                            {"global_avg_pool", "rank >= 3"}));
}

}  // namespace
}  // namespace tscope
