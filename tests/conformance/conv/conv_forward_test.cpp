// SPDX-License-Identifier: Apache-2.0
// Conv, ConvGradI and ConvGradW: the oneDNN kernels against the reference loops over padding,
// stride, dilation and group combinations in 1-D, 2-D and 3-D, odd sizes, batch 1 and strided
// inputs; the reference loops against values worked out by hand; shapes that change between calls.
#include <ostream>

#include "conv_test_util.h"

namespace tscope {
namespace {

struct ConvCase {
  std::string name;
  Dims x;
  Dims w;
  ConvOptions options;
};

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

std::vector<ConvCase> conv_cases() {
  using P = Padding;
  return {
      {"basic_3x3", {2, 3, 7, 7}, {4, 3, 3, 3}, {}},
      {"batch1_odd", {1, 3, 9, 11}, {5, 3, 3, 2}, {}},
      {"pad_symmetric", {2, 2, 6, 5}, {3, 2, 3, 3}, {.padding = P::symmetric({1, 2})}},
      {"pad_asymmetric", {1, 3, 7, 6}, {2, 3, 3, 3}, {.padding = P::explicit_pads({0, 1}, {2, 0})}},
      {"same_stride2", {2, 3, 8, 9}, {4, 3, 3, 3}, {.strides = {2, 2}, .padding = P::same()}},
      {"same_even_kernel", {1, 2, 7, 8}, {3, 2, 4, 4}, {.padding = P::same()}},
      {"full", {2, 2, 5, 4}, {3, 2, 3, 2}, {.padding = P::full()}},
      {"stride_dilation", {2, 3, 11, 10}, {4, 3, 3, 3},
       {.strides = {2, 3}, .padding = P::symmetric({1, 1}), .dilations = {2, 1}}},
      {"groups2", {2, 4, 6, 6}, {6, 2, 3, 3}, {.padding = P::symmetric({1, 1}), .groups = 2}},
      {"depthwise", {1, 3, 5, 5}, {3, 1, 3, 3}, {.padding = P::same(), .groups = 3}},
      // Depthwise windows above 3x3, whose weight gradient runs this project's loops
      // (depthwise_grad_weights.h): strides, dilations, asymmetric pads, taps that meet only
      // padding on some rows or columns.
      {"depthwise_5x5_same", {2, 5, 9, 8}, {5, 1, 5, 5}, {.padding = P::same(), .groups = 5}},
      {"depthwise_7x7_stride_dilation", {2, 4, 15, 13}, {4, 1, 7, 7},
       {.strides = {2, 1}, .padding = P::symmetric({3, 2}), .dilations = {1, 2}, .groups = 4}},
      {"depthwise_5x5_asymmetric_stride2", {1, 3, 10, 11}, {3, 1, 5, 5},
       {.strides = {2, 2}, .padding = P::explicit_pads({2, 0}, {1, 2}), .groups = 3}},
      {"depthwise_5x5_valid", {2, 2, 5, 6}, {2, 1, 5, 5}, {.groups = 2}},
      {"pointwise_stride2", {2, 3, 7, 7}, {8, 3, 1, 1}, {.strides = {2, 2}}},
      {"kernel_fills_input", {2, 2, 4, 4}, {3, 2, 4, 4}, {}},
      {"strided_drops_rows", {1, 2, 8, 7}, {2, 2, 3, 3}, {.strides = {3, 2}}},
      {"3d_basic", {2, 2, 5, 6, 7}, {3, 2, 3, 3, 3}, {}},
      {"3d_same_stride", {1, 3, 6, 7, 5}, {4, 3, 3, 3, 3},
       {.strides = {2, 1, 2}, .padding = P::same()}},
      {"3d_groups_dilation", {1, 4, 7, 6, 5}, {4, 2, 2, 3, 2},
       {.padding = P::symmetric({1, 0, 1}), .dilations = {2, 1, 1}, .groups = 2}},
      {"3d_batch1_asymmetric", {1, 2, 4, 5, 6}, {2, 2, 3, 2, 3},
       {.padding = P::explicit_pads({1, 0, 0}, {0, 1, 2})}},
      {"1d_stride_pad", {2, 3, 10}, {4, 3, 3}, {.strides = {2}, .padding = P::symmetric({1})}},
      // Channels enough for oneDNN's direct kernels on its blocked layouts, which the plain
      // tensors are reordered to and from within the call (also channels that fill no block).
      {"wide_3x3", {2, 32, 9, 9}, {48, 32, 3, 3}, {.padding = P::symmetric({1, 1})}},
      {"wide_stride2_partial_blocks", {2, 24, 10, 10}, {40, 24, 3, 3},
       {.strides = {2, 2}, .padding = P::symmetric({1, 1})}},
      {"wide_pointwise", {2, 64, 7, 7}, {32, 64, 1, 1}, {}},
      {"wide_stem_7x7", {2, 3, 20, 20}, {32, 3, 7, 7},
       {.strides = {2, 2}, .padding = P::symmetric({3, 3})}},
  };
}

class ConvOps : public ::testing::TestWithParam<std::tuple<ConvCase, bool>> {};

TEST_P(ConvOps, DnnlMatchesReference) {
  const auto& [c, strided] = GetParam();
  Variable x = tensor(DType::Float32, c.x, "x");
  Variable w = tensor(DType::Float32, c.w, "w");
  Variable y = conv(x, w, c.options);
  const Dims y_shape = y.type().dims;
  Variable dy = tensor(DType::Float32, y_shape, "dy");
  Variable dx = conv_grad_inputs(w, dy, testing::shape_constant(c.x), c.options);
  Variable dw = conv_grad_weights(x, dy, testing::shape_constant(c.w), c.options);
  std::vector<Tensor> values = {testing::random_tensor(DType::Float32, c.x, 1),
                                testing::random_tensor(DType::Float32, c.w, 2),
                                testing::random_tensor(DType::Float32, y_shape, 3)};
  if (strided) {
    for (Tensor& value : values) value = testing::non_contiguous_copy(value);
  }
  EXPECT_TRUE(testing::fast_matches_reference({x, w, dy}, {y, dx, dw}, values, 1e-4, 1e-5));
  EXPECT_EQ(testing::impls_of({x, w, dy}, {y, dx, dw}, values, "Conv"), "dnnl");
  EXPECT_EQ(testing::impls_of({x, w, dy}, {y, dx, dw}, values, "ConvGradI"), "dnnl");
  // oneDNN has no direct depthwise weight gradient above 3x3: those run this project's loops.
  const bool own_loops = c.x.rank() == 4 && c.options.groups == c.x[1] && c.w[0] == c.x[1] &&
                         c.w[1] == 1 && c.w[2] * c.w[3] > 9;
  EXPECT_EQ(testing::impls_of({x, w, dy}, {y, dx, dw}, values, "ConvGradW"),
            own_loops ? "cpu" : "dnnl");
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvOps,
                         ::testing::Combine(::testing::ValuesIn(conv_cases()), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param).name +
                                  (std::get<1>(info.param) ? "_strided" : "_contiguous");
                         });

TEST(Conv, ReferenceMatchesHandComputedValues) {
  // x = 0..15 as a 4x4 image; a 2x2 kernel of ones sums each window.
  std::vector<double> ramp(16);
  for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<double>(i);
  const Tensor x = Tensor::from_doubles(DType::Float64, {1, 1, 4, 4}, ramp);
  const Tensor ones = Tensor::full(DType::Float64, {1, 1, 2, 2}, 1.0);
  Variable vx = tensor(DType::Float64, {1, 1, 4, 4}, "x");
  Variable vw = tensor(DType::Float64, {1, 1, 2, 2}, "w");
  const auto out = testing::run_graph(
      {vx, vw},
      {conv2d(vx, vw), conv2d(vx, vw, {.strides = {2, 2}}),
       conv2d(vx, vw, {.padding = Padding::full()}),
       conv2d(vx, vw, {.dilations = {2, 2}})},
      {x, ones});
  EXPECT_EQ(out[0].shape(), (Dims{1, 1, 3, 3}));
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{10, 14, 18, 26, 30, 34, 42, 46, 50}));
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{10, 18, 42, 50}));
  EXPECT_EQ(out[2].shape(), (Dims{1, 1, 5, 5}));
  EXPECT_EQ(out[2].at(0), 0.0);   // only x[0, 0] under the kernel
  EXPECT_EQ(out[2].at(24), 15.0);
  EXPECT_EQ(out[2].at(6), 10.0);  // the first full window
  // Dilation 2: x[0,0] + x[0,2] + x[2,0] + x[2,2] = 0 + 2 + 8 + 10.
  EXPECT_EQ(out[3].to_doubles(), (std::vector<double>{20, 24, 36, 40}));
}

TEST(Conv, GroupsConvolveTheirOwnChannels) {
  // Two groups of one channel: each output channel sees only its own input channel.
  const Tensor x = Tensor::from_doubles(DType::Float64, {1, 2, 1, 2}, {1, 2, 10, 20});
  const Tensor w = Tensor::from_doubles(DType::Float64, {2, 1, 1, 1}, {3, 5});
  Variable vx = tensor(DType::Float64, {1, 2, 1, 2}, "x");
  Variable vw = tensor(DType::Float64, {2, 1, 1, 1}, "w");
  const auto out = testing::run_graph({vx, vw}, {conv2d(vx, vw, {.groups = 2})}, {x, w});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{3, 6, 50, 100}));
}

TEST(Conv, SameAndFullPaddingGiveTheirOutputShapes) {
  Variable x = tensor(DType::Float32, {2, 3, 9, 10, 11}, "x");
  Variable w = tensor(DType::Float32, {4, 3, 3, 4, 2}, "w");
  EXPECT_EQ(conv3d(x, w, {.padding = Padding::same()}).type().dims, (Dims{2, 4, 9, 10, 11}));
  EXPECT_EQ(conv3d(x, w, {.strides = {2, 3, 4}, .padding = Padding::same()}).type().dims,
            (Dims{2, 4, 5, 4, 3}));
  EXPECT_EQ(conv3d(x, w, {.padding = Padding::full()}).type().dims, (Dims{2, 4, 11, 13, 12}));
  EXPECT_EQ(conv3d(x, w, {.dilations = {2, 2, 2}}).type().dims, (Dims{2, 4, 5, 4, 9}));
}

TEST(Conv, UnknownStaticDimsAndChangingShapesReuseNothingStale) {
  // x's dims are known only at call time: the gradient graph uses Shape, and the oneDNN
  // primitive cached by each node must be rebuilt when a call brings new shapes.
  Variable x = tensor4(DType::Float32, "x");
  Variable w = tensor(DType::Float32, {4, 3, 3, 3}, "w");
  Variable y = conv2d(x, w, {.strides = {2, 2}, .padding = Padding::same()});
  Variable cost = sum(y * y);
  const std::vector<Variable> grads = grad(cost, {x, w});
  FunctionOptions fast;
  FunctionOptions reference;
  reference.reference_kernels = true;
  Function f = function({x, w}, {y, grads[0], grads[1]}, {}, fast);
  Function g = function({x, w}, {y, grads[0], grads[1]}, {}, reference);
  const Tensor wv = testing::random_tensor(DType::Float32, {4, 3, 3, 3}, 5);
  for (const Dims& shape : {Dims{2, 3, 8, 8}, Dims{1, 3, 5, 7}, Dims{2, 3, 8, 8}, Dims{3, 3, 4, 9}}) {
    const Tensor xv = testing::random_tensor(DType::Float32, shape, shape[3]);
    const std::vector<Tensor> a = f({xv, wv});
    const std::vector<Tensor> b = g({xv, wv});
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_TRUE(testing::all_close(a[i], b[i], 1e-4, 1e-4)) << shape.to_string() << " output " << i;
    }
  }
}

// The depthwise weight gradient above 3x3 splits its channels between the threads: each thread
// sums its own channels, so the result is the serial one bit for bit, and the reference's.
TEST(Conv, DepthwiseWeightGradientSplitsChannelsBetweenThreads) {
  const ConvOptions options{.padding = Padding::same(), .groups = 40};
  Variable x = tensor(DType::Float32, {2, 40, 24, 24}, "x");
  Variable dy = tensor(DType::Float32, {2, 40, 24, 24}, "dy");
  const Variable dw = conv_grad_weights(x, dy, testing::shape_constant({40, 1, 7, 7}), options);
  const std::vector<Tensor> values{testing::random_tensor(DType::Float32, {2, 40, 24, 24}, 61),
                                   testing::random_tensor(DType::Float32, {2, 40, 24, 24}, 62)};
  const std::vector<Tensor> serial = testing::run_graph({x, dy}, {dw}, values);
  const threads::ScopedThreadCount two_threads(2);
  const std::vector<Tensor> split = testing::run_graph({x, dy}, {dw}, values);
  EXPECT_TRUE(testing::all_close(split[0], serial[0], 0.0, 0.0));
  EXPECT_TRUE(testing::fast_matches_reference({x, dy}, {dw}, values, 1e-4, 1e-5));
}

TEST(Conv, Float64RunsTheReferenceKernels) {
  Variable x = tensor(DType::Float64, {1, 2, 5, 5}, "x");
  Variable w = tensor(DType::Float64, {3, 2, 3, 3}, "w");
  const std::vector<Tensor> values = {testing::random_tensor(DType::Float64, {1, 2, 5, 5}, 1),
                                      testing::random_tensor(DType::Float64, {3, 2, 3, 3}, 2)};
  EXPECT_EQ(testing::impls_of({x, w}, {conv2d(x, w)}, values, "Conv"), "ref");
}

TEST(Conv, EmptyBatchGivesEmptyOutput) {
  Variable x = tensor4(DType::Float32, "x");
  Variable w = tensor(DType::Float32, {2, 3, 3, 3}, "w");
  const auto out = testing::run_graph(
      {x, w}, {conv2d(x, w)},
      {Tensor::zeros(DType::Float32, {0, 3, 5, 5}), testing::random_tensor(DType::Float32, {2, 3, 3, 3}, 1)});
  EXPECT_EQ(out[0].shape(), (Dims{0, 2, 3, 3}));
}

}  // namespace
}  // namespace tscope
