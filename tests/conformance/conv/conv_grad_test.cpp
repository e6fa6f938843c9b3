// SPDX-License-Identifier: Apache-2.0
// Gradients of Conv, ConvGradI and ConvGradW by central finite differences (float64, reference
// kernels), second-order gradients through the gradient ops' own pullbacks, and the gradient
// graph's shape: grad() of a convolution builds one ConvGradI and one ConvGradW.
#include "conv_test_util.h"

namespace tscope {
namespace {

struct GradCase {
  const char* name;
  Dims x;
  Dims w;
  ConvOptions options;
};

std::vector<GradCase> grad_cases() {
  using P = Padding;
  return {
      {"valid", {2, 2, 5, 4}, {3, 2, 3, 2}, {}},
      {"stride_pad", {1, 2, 6, 7}, {2, 2, 3, 3}, {.strides = {2, 3}, .padding = P::symmetric({1, 2})}},
      {"same_dilation", {1, 2, 6, 6}, {2, 2, 2, 3}, {.padding = P::same(), .dilations = {2, 1}}},
      {"full_asymmetric", {1, 1, 4, 3}, {2, 1, 2, 2},
       {.padding = P::explicit_pads({1, 0}, {0, 2})}},
      {"groups", {1, 4, 4, 4}, {4, 2, 3, 3}, {.padding = P::full(), .groups = 2}},
      {"3d", {1, 2, 4, 3, 4}, {2, 2, 2, 2, 3}, {.strides = {2, 1, 1}, .padding = P::same()}},
  };
}

Tensor point(const Dims& shape, std::uint64_t seed) {
  return testing::random_tensor(DType::Float64, shape, seed);
}

TEST(ConvGradients, ConvMatchesFiniteDifferences) {
  for (const GradCase& c : grad_cases()) {
    const ConvOptions options = c.options;
    EXPECT_TRUE(testing::gradient_matches_numeric(
        [&](const auto& v) { return conv(v[0], v[1], options); }, {point(c.x, 1), point(c.w, 2)}))
        << c.name;
  }
}

TEST(ConvGradients, GradientOpsMatchFiniteDifferences) {
  // ConvGradI(w, dy) and ConvGradW(x, dy) are differentiable in both data inputs.
  for (const GradCase& c : grad_cases()) {
    const ConvOptions options = c.options;
    Variable probe = conv(tensor(DType::Float64, c.x), tensor(DType::Float64, c.w), options);
    const Dims y = probe.type().dims;
    const Dims x_shape = c.x;
    const Dims w_shape = c.w;
    EXPECT_TRUE(testing::gradient_matches_numeric(
        [&](const auto& v) {
          return conv_grad_inputs(v[0], v[1], testing::shape_constant(x_shape), options);
        },
        {point(c.w, 3), point(y, 4)}))
        << c.name << " ConvGradI";
    EXPECT_TRUE(testing::gradient_matches_numeric(
        [&](const auto& v) {
          return conv_grad_weights(v[0], v[1], testing::shape_constant(w_shape), options);
        },
        {point(c.x, 5), point(y, 6)}))
        << c.name << " ConvGradW";
  }
}

TEST(ConvGradients, SecondOrderThroughTheGradientOps) {
  // d/d(x, w) of a function of grad(cost): the pullbacks of ConvGradI and ConvGradW at work.
  for (const GradCase& c : grad_cases()) {
    const ConvOptions options = c.options;
    EXPECT_TRUE(testing::gradient_matches_numeric(
        [&](const auto& v) {
          Variable y = conv(v[0], v[1], options);
          const std::vector<Variable> g = grad(sum(y * y * y), {v[0], v[1]});
          return sum(g[0] * g[0]) + sum(g[1] * g[1]);
        },
        {point(c.x, 7), point(c.w, 8)}, {.rtol = 1e-3, .atol = 1e-5}))
        << c.name;
  }
}

TEST(ConvGradients, GradBuildsConvGradIAndConvGradW) {
  Variable x = tensor(DType::Float32, {2, 3, 6, 6}, "x");
  Variable w = tensor(DType::Float32, {4, 3, 3, 3}, "w");
  Variable y = conv2d(x, w, {.padding = Padding::same()});
  const std::vector<Variable> g = grad(sum(y), {x, w});
  ASSERT_NE(g[0].owner(), nullptr);
  ASSERT_NE(g[1].owner(), nullptr);
  EXPECT_EQ(g[0].owner()->op().name, "ConvGradI");
  EXPECT_EQ(g[1].owner()->op().name, "ConvGradW");
  EXPECT_EQ(g[0].type(), x.type());
  EXPECT_EQ(g[1].type(), w.type());
  // The builders and grad() agree.
  Variable dy = tensor(DType::Float32, {2, 4, 6, 6}, "dy");
  const std::vector<Variable> by_grad = grad(sum(y * dy), {x, w});
  const ConvOptions options{.padding = Padding::same()};
  const std::vector<Tensor> values = {testing::random_tensor(DType::Float32, {2, 3, 6, 6}, 1),
                                      testing::random_tensor(DType::Float32, {4, 3, 3, 3}, 2),
                                      testing::random_tensor(DType::Float32, {2, 4, 6, 6}, 3)};
  const auto out = testing::run_graph(
      {x, w, dy},
      {by_grad[0], by_grad[1],
       conv_grad_inputs(w, dy, testing::shape_constant({2, 3, 6, 6}), options),
       conv_grad_weights(x, dy, testing::shape_constant({4, 3, 3, 3}), options)},
      values);
  EXPECT_TRUE(testing::all_close(out[0], out[2]));
  EXPECT_TRUE(testing::all_close(out[1], out[3]));
}

}  // namespace
}  // namespace tscope
