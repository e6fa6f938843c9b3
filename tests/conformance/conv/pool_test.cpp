// SPDX-License-Identifier: Apache-2.0
// MaxPool, AveragePool and their gradients: oneDNN against the reference loops (2-D, 3-D, odd
// sizes, padding, strides, strided inputs), hand-computed values including the two divisors of
// average pooling, finite-difference gradients up to MaxPoolGradGrad, global_avg_pool, and
// ceil_mode (Theano's ignore_border=False): partial windows at the end of each axis.
#include <ostream>

#include "conv_test_util.h"

namespace tscope {
namespace {

struct PoolCase {
  std::string name;
  Dims x;
  PoolOptions options;
};

void PrintTo(const PoolCase& c, std::ostream* os) { *os << c.name; }

std::vector<PoolCase> pool_cases() {
  using P = Padding;
  return {
      {"k2", {2, 3, 8, 8}, {.kernel = {2, 2}}},
      {"k3_s1_pad1",
       {1, 2, 7, 6},
       {.kernel = {3, 3}, .strides = {1, 1}, .padding = P::symmetric({1, 1})}},
      {"k3_s2_odd", {1, 2, 9, 7}, {.kernel = {3, 3}, .strides = {2, 2}}},
      {"asymmetric_pads",
       {2, 1, 7, 5},
       {.kernel = {3, 2}, .strides = {2, 1}, .padding = P::explicit_pads({1, 0}, {2, 1})}},
      {"same_s2", {1, 3, 7, 8}, {.kernel = {3, 3}, .strides = {2, 2}, .padding = P::same()}},
      {"kernel_fills_input", {2, 2, 5, 4}, {.kernel = {5, 4}}},
      {"3d_k2", {2, 2, 4, 6, 5}, {.kernel = {2, 2, 2}}},
      {"3d_k3_s2_pad1",
       {1, 3, 5, 6, 7},
       {.kernel = {3, 3, 3}, .strides = {2, 2, 2}, .padding = P::symmetric({1, 1, 1})}},
      {"ceil_k2_odd", {2, 3, 7, 5}, {.kernel = {2, 2}, .ceil_mode = true}},
      {"ceil_k3_s2", {1, 2, 8, 6}, {.kernel = {3, 3}, .strides = {2, 2}, .ceil_mode = true}},
      {"ceil_stride_past_kernel",
       {1, 2, 7, 4},
       {.kernel = {2, 2}, .strides = {3, 3}, .ceil_mode = true}},
      {"ceil_pad1",
       {1, 2, 6, 7},
       {.kernel = {3, 3}, .strides = {2, 2}, .padding = P::symmetric({1, 1}), .ceil_mode = true}},
      {"3d_ceil_k2", {1, 2, 5, 3, 4}, {.kernel = {2, 2, 2}, .ceil_mode = true}},
  };
}

class PoolOps : public ::testing::TestWithParam<std::tuple<PoolCase, bool>> {};

TEST_P(PoolOps, DnnlMatchesReference) {
  const auto& [c, strided] = GetParam();
  Variable x = tensor(DType::Float32, c.x, "x");
  PoolOptions include = c.options;
  include.include_pad = true;
  PoolOptions exclude = c.options;
  exclude.include_pad = false;
  Variable max_y = max_pool(x, c.options);
  const Dims y_shape = max_y.type().dims;
  Variable dy = tensor(DType::Float32, y_shape, "dy");
  Variable h = tensor(DType::Float32, c.x, "h");
  const std::vector<Variable> outputs = {
      max_y,
      avg_pool(x, include),
      avg_pool(x, exclude),
      max_pool_grad(x, dy, c.options),
      avg_pool_grad(dy, testing::shape_constant(c.x), include),
      avg_pool_grad(dy, testing::shape_constant(c.x), exclude),
      max_pool_grad_grad(x, h, c.options)};
  std::vector<Tensor> values = {testing::random_tensor(DType::Float32, c.x, 1),
                                testing::random_tensor(DType::Float32, y_shape, 2),
                                testing::random_tensor(DType::Float32, c.x, 3)};
  if (strided) {
    for (Tensor& value : values) value = testing::non_contiguous_copy(value);
  }
  EXPECT_TRUE(testing::fast_matches_reference({x, dy, h}, outputs, values, 1e-5, 1e-6));
  for (const char* op : {"MaxPool", "MaxPoolGrad"}) {
    EXPECT_EQ(testing::impls_of({x, dy, h}, outputs, values, op), "dnnl") << op;
  }
  for (const char* op : {"AveragePool", "AveragePoolGrad"}) {
    EXPECT_EQ(testing::impls_of({x, dy, h}, outputs, values, op), "dnnl,dnnl") << op;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, PoolOps,
                         ::testing::Combine(::testing::ValuesIn(pool_cases()), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param).name +
                                  (std::get<1>(info.param) ? "_strided" : "_contiguous");
                         });

Tensor ramp_4x4() {
  std::vector<double> values(16);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  return Tensor::from_doubles(DType::Float64, {1, 1, 4, 4}, values);
}

TEST(Pool, ReferenceMatchesHandComputedValues) {
  Variable x = tensor(DType::Float64, {1, 1, 4, 4}, "x");
  const PoolOptions padded{.kernel = {2, 2}, .padding = Padding::symmetric({1, 1})};
  PoolOptions padded_include = padded;
  padded_include.include_pad = true;
  const auto out = testing::run_graph(
      {x},
      {max_pool2d(x, {.kernel = {2, 2}}), avg_pool2d(x, {.kernel = {2, 2}}),
       max_pool2d(x, padded), avg_pool2d(x, padded), avg_pool2d(x, padded_include),
       global_avg_pool(x)},
      {ramp_4x4()});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{5, 7, 13, 15}));
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{2.5, 4.5, 10.5, 12.5}));
  // Padded to 6x6, 2x2 windows at stride 2: corners hold one real element, edges two, the centre
  // four.
  EXPECT_EQ(out[2].shape(), (Dims{1, 1, 3, 3}));
  EXPECT_EQ(out[2].to_doubles(), (std::vector<double>{0, 2, 3, 8, 10, 11, 12, 14, 15}));
  EXPECT_EQ(out[3].at(0), 0.0);                      // x[0,0] / 1
  EXPECT_EQ(out[3].at(1), (1.0 + 2.0) / 2.0);        // two real elements
  EXPECT_EQ(out[3].at(4), (5.0 + 6.0 + 9.0 + 10.0) / 4.0);
  EXPECT_EQ(out[4].at(1), (1.0 + 2.0) / 4.0);        // pads count in the divisor
  EXPECT_EQ(out[5].shape(), (Dims{1, 1, 1, 1}));
  EXPECT_EQ(out[5].at(0), 7.5);
}

TEST(Pool, CeilModeKeepsPartialWindowsAtTheEnd) {
  std::vector<double> ramp(25);
  for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<double>(i);
  Variable x = tensor(DType::Float64, {1, 1, 5, 5}, "x");
  const PoolOptions ceil{.kernel = {2, 2}, .ceil_mode = true};
  PoolOptions ceil_include = ceil;
  ceil_include.include_pad = true;
  Variable max_y = max_pool2d(x, ceil);
  EXPECT_EQ(max_y.type().dims, (Dims{1, 1, 3, 3}));
  EXPECT_EQ(max_y.owner()->op_string(),
            "MaxPool2d{kernel=(2,2),stride=(2,2),pad=(0,0),ceil_mode=True}");
  const auto out =
      testing::run_graph({x}, {max_y, avg_pool2d(x, ceil), avg_pool2d(x, ceil_include)},
                         {Tensor::from_doubles(DType::Float64, {1, 1, 5, 5}, ramp)});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{6, 8, 9, 16, 18, 19, 21, 23, 24}));
  // Partial windows average over the elements they hold, or over the kernel with include_pad.
  EXPECT_EQ(out[1].at(0), (0.0 + 1.0 + 5.0 + 6.0) / 4.0);
  EXPECT_EQ(out[1].at(2), (4.0 + 9.0) / 2.0);
  EXPECT_EQ(out[1].at(8), 24.0);
  EXPECT_EQ(out[2].at(2), (4.0 + 9.0) / 4.0);
  EXPECT_EQ(out[2].at(8), 24.0 / 4.0);
  // Theano's extents for ignore_border=False: a window must start inside the input.
  const auto extent = [](std::int64_t in, std::int64_t kernel, std::int64_t stride) {
    Variable probe = tensor(DType::Float32, {1, 1, in, 1}, "probe");
    return max_pool2d(probe, {.kernel = {kernel, 1}, .strides = {stride, 1}, .ceil_mode = true})
        .type()
        .dims[2];
  };
  EXPECT_EQ(extent(3, 2, 3), 1);
  EXPECT_EQ(extent(7, 2, 3), 3);
  EXPECT_EQ(extent(4, 2, 3), 2);
  EXPECT_EQ(extent(2, 3, 1), 1);  // one window over an input smaller than the kernel
  EXPECT_EQ(extent(6, 3, 2), 3);
  // An extent unknown at build time is resolved when the function runs.
  Variable free = tensor4(DType::Float32, "free");
  Variable pooled = max_pool2d(free, ceil);
  EXPECT_EQ(pooled.type().dims[2], kUnknownDim);
  EXPECT_EQ(testing::run_graph({free}, {pooled}, {Tensor::zeros(DType::Float32, {1, 2, 7, 4})})[0]
                .shape(),
            (Dims{1, 2, 4, 2}));
}

TEST(Pool, MaxPoolGradRoutesToTheMaximum) {
  Variable x = tensor(DType::Float64, {1, 1, 4, 4}, "x");
  Variable dy = tensor(DType::Float64, {1, 1, 2, 2}, "dy");
  const Tensor dyv = Tensor::from_doubles(DType::Float64, {1, 1, 2, 2}, {1, 2, 3, 4});
  const auto out = testing::run_graph(
      {x, dy}, {max_pool_grad(x, dy, {.kernel = {2, 2}})}, {ramp_4x4(), dyv});
  EXPECT_EQ(out[0].to_doubles(),
            (std::vector<double>{0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}));
}

TEST(PoolGradients, MatchFiniteDifferences) {
  const Tensor x2 = testing::random_tensor(DType::Float64, {2, 2, 5, 6}, 1);
  const Tensor x3 = testing::random_tensor(DType::Float64, {1, 2, 4, 5, 3}, 2);
  const std::vector<PoolOptions> options2 = {
      {.kernel = {2, 2}},
      {.kernel = {3, 3}, .strides = {2, 1}, .padding = Padding::symmetric({1, 1})},
      {.kernel = {3, 2}, .strides = {1, 2}, .padding = Padding::same(), .include_pad = true},
      {.kernel = {2, 3}, .strides = {2, 2}, .padding = Padding::explicit_pads({1, 0}, {0, 2})},
      {.kernel = {2, 2}, .ceil_mode = true},
      {.kernel = {2, 3}, .strides = {2, 2}, .include_pad = true, .ceil_mode = true}};
  const std::vector<PoolOptions> options3 = {
      {.kernel = {2, 2, 2}},
      {.kernel = {3, 2, 3}, .strides = {1, 2, 1}, .padding = Padding::symmetric({1, 0, 1}),
       .include_pad = true}};
  auto check = [](const Tensor& x, const PoolOptions& options, const std::string& name) {
    EXPECT_TRUE(testing::gradient_matches_numeric(
        [&](const auto& v) { return max_pool(v[0], options); }, {x}))
        << name << " max";
    EXPECT_TRUE(testing::gradient_matches_numeric(
        [&](const auto& v) { return avg_pool(v[0], options); }, {x}))
        << name << " avg";
    Variable probe = max_pool(tensor(DType::Float64, x.shape()), options);
    const Tensor dy = testing::random_tensor(DType::Float64, probe.type().dims, 3);
    const Tensor h = testing::random_tensor(DType::Float64, x.shape(), 4);
    const Dims x_shape = x.shape();
    EXPECT_TRUE(testing::gradient_matches_numeric(
        [&](const auto& v) { return max_pool_grad(v[0], v[1], options); }, {x, dy}))
        << name << " MaxPoolGrad";
    EXPECT_TRUE(testing::gradient_matches_numeric(
        [&](const auto& v) { return max_pool_grad_grad(v[0], v[1], options); }, {x, h}))
        << name << " MaxPoolGradGrad";
    EXPECT_TRUE(testing::gradient_matches_numeric(
        [&](const auto& v) {
          return avg_pool_grad(v[0], testing::shape_constant(x_shape), options);
        },
        {dy}))
        << name << " AveragePoolGrad";
  };
  for (std::size_t i = 0; i < options2.size(); ++i) check(x2, options2[i], "2d#" + std::to_string(i));
  for (std::size_t i = 0; i < options3.size(); ++i) check(x3, options3[i], "3d#" + std::to_string(i));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return global_avg_pool(v[0]); }, {x3}));
}

TEST(PoolGradients, SecondOrderThroughThePoolGradients) {
  const PoolOptions options{.kernel = {2, 2}, .strides = {1, 1}, .padding = Padding::symmetric({1, 0})};
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [&](const auto& v) {
        Variable y = max_pool(v[0], options) + avg_pool(v[0] * v[0], options);
        Variable g = grad(sum(y * y), {v[0]})[0];
        return g * g;
      },
      {testing::random_tensor(DType::Float64, {1, 2, 4, 5}, 11)}, {.rtol = 1e-3, .atol = 1e-5}));
}

}  // namespace
}  // namespace tscope
