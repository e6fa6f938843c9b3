// SPDX-License-Identifier: Apache-2.0
#include "support/test_util.h"

namespace tscope {
namespace {

struct AxesCase {
  std::string name;
  Dims shape;
  std::vector<std::int64_t> axes;
  bool keepdims;
};

class Reduce : public ::testing::TestWithParam<AxesCase> {};

TEST_P(Reduce, SumAndMeanFastMatchReferenceAndGradients) {
  const AxesCase& c = GetParam();
  Variable x = tensor(DType::Float32, c.shape, "x");
  const Tensor value = testing::random_tensor(DType::Float32, c.shape, 5);
  EXPECT_TRUE(testing::fast_matches_reference({x}, {sum(x, c.axes, c.keepdims), mean(x, c.axes, c.keepdims)},
                                              {value}, 1e-5, 1e-5));
  EXPECT_TRUE(testing::fast_matches_reference({x}, {sum(x, c.axes, c.keepdims)},
                                              {testing::non_contiguous_copy(value)}, 1e-5, 1e-5));
  const Tensor point = testing::random_tensor(DType::Float64, c.shape, 6);
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [&](const auto& v) { return sum(v[0], c.axes, c.keepdims); }, {point}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [&](const auto& v) { return mean(v[0], c.axes, c.keepdims); }, {point}));
}

INSTANTIATE_TEST_SUITE_P(Axes, Reduce,
                         ::testing::Values(AxesCase{"all", {3, 4}, {}, false},
                                           AxesCase{"last", {3, 4}, {1}, false},
                                           AxesCase{"first_keep", {3, 4}, {0}, true},
                                           AxesCase{"middle", {2, 3, 4}, {1}, false},
                                           AxesCase{"outer_two", {2, 3, 4}, {0, 2}, true},
                                           AxesCase{"negative", {2, 3}, {-1}, false},
                                           // Trailing axes of a contiguous input: per-row sums
                                           // (global average pooling; rows with a tail of 1).
                                           AxesCase{"trailing_pool", {2, 5, 7, 7}, {2, 3}, true},
                                           AxesCase{"trailing_odd", {3, 5, 13}, {1, 2}, false},
                                           // Rows too short for sum_row's lanes.
                                           AxesCase{"trailing_short", {2, 6, 2, 2}, {2, 3}, false},
                                           // A run of middle axes: the pool of a channel-blocked
                                           // (N, C/B, H, W, B) value, and an odd inner extent.
                                           AxesCase{"blocked_pool", {2, 3, 3, 3, 16}, {2, 3}, true},
                                           AxesCase{"middle_run", {2, 3, 4, 5}, {1, 2}, false}),
                         [](const auto& info) { return info.param.name; });

TEST(Reduce, TrailingRowSumsInFloat64MatchTheReference) {
  Variable x = tensor(DType::Float64, {4, 6, 9, 9}, "x");
  const Tensor value = testing::random_tensor(DType::Float64, {4, 6, 9, 9}, 8, -1e3, 1e3);
  EXPECT_TRUE(testing::fast_matches_reference(
      {x}, {sum(x, {2, 3}, true), mean(x, {1, 2, 3}, false), sum(x, {3})}, {value}, 1e-13, 1e-10));
}

TEST(Reduce, PoolOfAChannelSliceMatchesTheReference) {
  // The first channels of a wider value (the real channels of a zero-padded one): the pooled rows
  // are contiguous, the outer axes step over the dropped channels.
  Variable x = tensor(DType::Float32, {2, 9, 3, 3}, "x");
  const Variable channels = subtensor(x, {slice(), slice(0, 7)});
  const Tensor value = testing::random_tensor(DType::Float32, {2, 9, 3, 3}, 9);
  EXPECT_TRUE(testing::fast_matches_reference(
      {x}, {mean(channels, {2, 3}, true), sum(channels, {2, 3}, false)}, {value}, 1e-5, 1e-5));
}

TEST(Reduce, SumOfIntegersAccumulatesInInt64) {
  Variable x = vector(DType::Int8, "x");
  Variable s = sum(x);
  EXPECT_EQ(s.dtype(), DType::Int64);
  const auto out = testing::run_graph({x}, {s}, {Tensor::from_vector<std::int8_t>({3}, {100, 100, 100})});
  EXPECT_EQ(out[0].at(0), 300.0);
}

TEST(Reduce, AxisOutOfRangeIsAnError) {
  Variable x = matrix(DType::Float32, "x");
  EXPECT_THROW((void)sum(x, {2}), Error);
}

TEST(Reduce, ZeroSizeSumIsZero) {
  Variable x = matrix(DType::Float32, "x");
  const auto out = testing::run_graph({x}, {sum(x, {0})}, {Tensor::zeros(DType::Float32, {0, 3})});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{0, 0, 0}));
}

}  // namespace
}  // namespace tscope
