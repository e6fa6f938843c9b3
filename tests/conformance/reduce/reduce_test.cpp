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
                                           AxesCase{"negative", {2, 3}, {-1}, false}),
                         [](const auto& info) { return info.param.name; });

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
