// SPDX-License-Identifier: Apache-2.0
// ConvTranspose: values by hand, output extents with output_padding, equality with ConvGradI of
// the transposed convolution, oneDNN against the reference loops, finite-difference gradients,
// printed name and errors.
#include "conv_test_util.h"

namespace tscope {
namespace {

using testing::throws_naming;

TEST(ConvTranspose, ReferenceMatchesHandComputedValues) {
  Variable x = tensor(DType::Float64, {1, 1, 2, 2}, "x");
  Variable w = tensor(DType::Float64, {1, 1, 2, 2}, "w");
  const Tensor xv = Tensor::from_doubles(DType::Float64, {1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor ones = Tensor::full(DType::Float64, {1, 1, 2, 2}, 1.0);
  const auto out = testing::run_graph(
      {x, w}, {conv_transpose2d(x, w), conv_transpose2d(x, w, {.strides = {2, 2}})}, {xv, ones});
  // Stride 1: every x value spreads over a 2x2 block, and blocks overlap.
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{1, 3, 2, 4, 10, 6, 3, 7, 4}));
  // Stride 2: the blocks tile the output.
  EXPECT_EQ(out[1].to_doubles(),
            (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
}

TEST(ConvTranspose, OutputExtentsAndConvGradIAgree) {
  Variable x = tensor(DType::Float32, {2, 4, 5, 6}, "x");
  Variable w = tensor(DType::Float32, {4, 3, 3, 3}, "w");
  const ConvTransposeOptions options{.strides = {2, 3}, .padding = Padding::symmetric({1, 0}),
                                     .output_padding = {1, 2}};
  Variable y = conv_transpose2d(x, w, options);
  // (5 - 1) * 2 - 2 + 3 + 1 = 10 and (6 - 1) * 3 - 0 + 3 + 2 = 20.
  EXPECT_EQ(y.type().dims, (Dims{2, 3, 10, 20}));
  Variable same_by_grad = conv_grad_inputs(
      w, x, testing::shape_constant({2, 3, 10, 20}),
      {.strides = {2, 3}, .padding = Padding::symmetric({1, 0})});
  const std::vector<Tensor> values = {testing::random_tensor(DType::Float32, {2, 4, 5, 6}, 1),
                                      testing::random_tensor(DType::Float32, {4, 3, 3, 3}, 2)};
  const auto out = testing::run_graph({x, w}, {y, same_by_grad}, values);
  EXPECT_TRUE(testing::all_close(out[0], out[1]));
  EXPECT_EQ(testing::impls_of({x, w}, {y}, values, "ConvTranspose"), "dnnl");
}

TEST(ConvTranspose, DnnlMatchesReference) {
  struct Case {
    const char* name;
    Dims x;
    Dims w;
    ConvTransposeOptions options;
  };
  const std::vector<Case> cases = {
      {"basic", {2, 3, 4, 5}, {3, 2, 3, 3}, {}},
      {"stride_pad_outpad", {1, 2, 5, 4}, {2, 3, 3, 2},
       {.strides = {2, 2}, .padding = Padding::explicit_pads({1, 0}, {0, 1}), .output_padding = {1, 0}}},
      {"groups_dilation", {1, 4, 5, 5}, {4, 3, 3, 3},
       {.strides = {1, 2}, .dilations = {2, 1}, .groups = 2}},
      {"3d", {1, 2, 3, 4, 3}, {2, 2, 2, 3, 2},
       {.strides = {2, 1, 2}, .padding = Padding::symmetric({0, 1, 0}), .output_padding = {1, 0, 0}}},
  };
  for (const Case& c : cases) {
    for (bool strided : {false, true}) {
      Variable x = tensor(DType::Float32, c.x, "x");
      Variable w = tensor(DType::Float32, c.w, "w");
      Variable y = conv_transpose(x, w, c.options);
      Variable h = tensor(DType::Float32, y.type().dims, "h");
      const std::vector<Variable> g = grad(sum(y * h), {x, w});
      std::vector<Tensor> values = {testing::random_tensor(DType::Float32, c.x, 1),
                                    testing::random_tensor(DType::Float32, c.w, 2),
                                    testing::random_tensor(DType::Float32, y.type().dims, 3)};
      if (strided) {
        for (Tensor& value : values) value = testing::non_contiguous_copy(value);
      }
      EXPECT_TRUE(testing::fast_matches_reference({x, w, h}, {y, g[0], g[1]}, values, 1e-4, 1e-5))
          << c.name << (strided ? " strided" : "");
    }
  }
}

TEST(ConvTranspose, GradientsMatchFiniteDifferences) {
  const ConvTransposeOptions options{.strides = {2, 1}, .padding = Padding::symmetric({1, 0}),
                                     .groups = 2, .output_padding = {1, 0}};
  const std::vector<Tensor> point = {testing::random_tensor(DType::Float64, {1, 4, 3, 3}, 1),
                                     testing::random_tensor(DType::Float64, {4, 1, 3, 2}, 2)};
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [&](const auto& v) { return conv_transpose(v[0], v[1], options); }, point));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [&](const auto& v) {
        Variable y = conv_transpose(v[0], v[1], options);
        const std::vector<Variable> g = grad(sum(y * y * y), {v[0], v[1]});
        return sum(g[0] * g[0]) + sum(g[1] * g[1]);
      },
      point, {.rtol = 1e-3, .atol = 1e-5}));
}

TEST(ConvTranspose, PrintedNameAndErrors) {
  Variable x = tensor(DType::Float32, {1, 4, 5, 5}, "x");
  Variable w = tensor(DType::Float32, {4, 2, 3, 3}, "w");
  EXPECT_EQ(conv_transpose2d(x, w, {.strides = {2, 2}, .output_padding = {1, 1}}).owner()->op_string(),
            "ConvTranspose2d{stride=(2,2),pad=(0,0),dilation=(1,1),groups=1,output_padding=(1,1)}");
  EXPECT_TRUE(throws_naming([&] { (void)conv_transpose2d(x, w, {.output_padding = {1, 0}}); },
                            ErrorKind::InvalidArgument,
                            {"ConvTranspose2d", "output_padding (1, 0)", "strides (1, 1)"}));
  EXPECT_TRUE(throws_naming(
      [&] { (void)conv_transpose2d(tensor(DType::Float32, {1, 3, 5, 5}, "x3"), w); },
      ErrorKind::ShapeMismatch, {"(1, 3, 5, 5)", "(4, 2, 3, 3)", "expects 4"}));
  EXPECT_TRUE(throws_naming([&] { (void)conv_transpose2d(x, w, {.padding = Padding::same()}); },
                            ErrorKind::InvalidArgument, {"padding must be explicit"}));
  EXPECT_TRUE(throws_naming(
      [&] { (void)conv_transpose2d(tensor(DType::Float32, {1, 4, 1, 1}, "x1"), w,
                                   {.padding = Padding::symmetric({2, 2})}); },
      ErrorKind::ShapeMismatch, {"(1, 4, 1, 1)", "extent -1"}));
}

}  // namespace
}  // namespace tscope
