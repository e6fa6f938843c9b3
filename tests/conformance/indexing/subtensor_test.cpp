// SPDX-License-Identifier: Apache-2.0
#include <ostream>

#include "support/test_util.h"

namespace tscope {
namespace {

// 0, 1, 2, ... in the given shape, so every expected value can be written from its position.
Tensor arange(DType dtype, const Dims& shape) {
  std::vector<double> values(static_cast<std::size_t>(shape.product()));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  return Tensor::from_doubles(dtype, shape, values);
}

std::string what_of(const std::function<void()>& fn, ErrorKind expected_kind) {
  try {
    fn();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), expected_kind) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "no error raised";
  return "";
}

struct SliceCase {
  std::string name;
  Dims shape;
  IndexList indices;
  Dims expected_shape;
};

void PrintTo(const SliceCase& c, std::ostream* os) { *os << c.name; }

class SubtensorSlices : public ::testing::TestWithParam<SliceCase> {};

TEST_P(SubtensorSlices, ViewMatchesCopyingReferenceAndStaticShape) {
  const SliceCase& c = GetParam();
  Variable x = tensor(DType::Float32, c.shape, "x");
  Variable y = subtensor(x, c.indices);
  EXPECT_EQ(y.type().dims, c.expected_shape);
  const Tensor value = testing::random_tensor(DType::Float32, c.shape, 3);
  const Tensor out = testing::run_graph({x}, {y}, {value})[0];
  EXPECT_EQ(out.shape(), c.expected_shape);
  EXPECT_TRUE(testing::fast_matches_reference({x}, {y}, {value}));
  EXPECT_TRUE(testing::fast_matches_reference({x}, {y}, {testing::non_contiguous_copy(value)}));
}

TEST_P(SubtensorSlices, GradientMatchesNumeric) {
  const SliceCase& c = GetParam();
  EXPECT_TRUE(
      testing::gradient_matches_numeric([&](const auto& v) { return subtensor(v[0], c.indices); },
                                        {testing::random_tensor(DType::Float64, c.shape, 4)}));
}

INSTANTIATE_TEST_SUITE_P(
    Cases,
    SubtensorSlices,
    ::testing::Values(
        SliceCase{"Interior_5x6_step2", {5, 6}, {slice(1, -1), slice(none, none, 2)}, {3, 3}},
        SliceCase{"Reverse_6", {6}, {slice(none, none, -1)}, {6}},
        SliceCase{"NegativeStepBounds_7", {7}, {slice(5, 1, -2)}, {2}},
        SliceCase{"IntegersDropAxes_3x4x5", {3, 4, 5}, {1, slice(), -1}, {4}},
        SliceCase{"TrailingAxesImplicit_3x4x5", {3, 4, 5}, {slice(1)}, {2, 4, 5}},
        SliceCase{"ZeroLength_4x3", {4, 3}, {slice(3, 1)}, {0, 3}},
        SliceCase{"ZeroLengthNegativeStep_4", {4}, {slice(1, 3, -1)}, {0}},
        SliceCase{"ClippedBounds_4", {4}, {slice(-10, 10)}, {4}},
        SliceCase{"StepLongerThanAxis_5", {5}, {slice(none, none, 100)}, {1}},
        SliceCase{"NegativeStepLongerThanAxis_5", {5}, {slice(none, none, -100)}, {1}},
        SliceCase{"EmptyInput_0x3", {0, 3}, {slice(1), 2}, {0}},
        SliceCase{"ScalarResult_2x3", {2, 3}, {-1, 0}, {}}),
    [](const auto& info) { return info.param.name; });

TEST(Subtensor, SelectsTheValuesNumPyDoes) {
  Variable v = vector(DType::Int64, "v");
  const Tensor ten = arange(DType::Int64, {10});
  const auto outs =
      testing::run_graph({v},
                         {subtensor(v, {slice(8, 1, -3)}), subtensor(v, {slice(-3)}),
                          subtensor(v, {slice(none, none, -4)}), subtensor(v, {slice(5, -20, -2)}),
                          subtensor(v, {slice(none, -7)})},
                         {ten});
  EXPECT_EQ(outs[0].to_doubles(), (std::vector<double>{8, 5, 2}));
  EXPECT_EQ(outs[1].to_doubles(), (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(outs[2].to_doubles(), (std::vector<double>{9, 5, 1}));
  EXPECT_EQ(outs[3].to_doubles(), (std::vector<double>{5, 3, 1}));
  EXPECT_EQ(outs[4].to_doubles(), (std::vector<double>{0, 1, 2}));
}

TEST(Subtensor, MixedSliceAndIntegerIsAViewWithTheRightValues) {
  Variable x = tensor(DType::Float64, {4, 5, 6}, "x");
  Variable y = subtensor(x, {slice(1, -1), slice(none, none, 2), 3});  // x[1:-1, ::2, 3]
  const Tensor value = arange(DType::Float64, {4, 5, 6});
  const Tensor out = testing::run_graph({x}, {y}, {value})[0];
  ASSERT_EQ(out.shape(), (Dims{2, 3}));
  EXPECT_EQ(out.buffer(), value.buffer());
  std::vector<double> expected;
  for (int i = 1; i <= 2; ++i) {
    for (int j = 0; j < 5; j += 2) expected.push_back(i * 30 + j * 6 + 3);
  }
  EXPECT_EQ(out.to_doubles(), expected);
  ASSERT_NE(y.owner(), nullptr);
  EXPECT_EQ(y.owner()->op_string(), "Subtensor{1:-1, ::2, 3}");
  EXPECT_EQ(y.owner()->op().aliasing.views, (std::vector<std::pair<int, int>>{{0, 0}}));
}

TEST(Subtensor, NegativeStrideViewsFeedOtherOps) {
  Variable x = matrix(DType::Float32, "x");
  Variable reversed = subtensor(x, {slice(none, none, -1), slice(none, none, -2)});
  const std::vector<Variable> outputs{exp(reversed) + reversed, sum(reversed, {0}),
                                      subtensor(reversed, {slice(1), -1})};
  const Tensor value = testing::random_tensor(DType::Float32, {4, 5}, 7);
  EXPECT_TRUE(testing::fast_matches_reference({x}, outputs, {value}));
  EXPECT_TRUE(testing::fast_matches_reference({x}, outputs, {testing::non_contiguous_copy(value)}));
  const Tensor nested = testing::run_graph({x}, {outputs[2]}, {value})[0];
  // reversed[1:, -1] = x[::-1, ::-2][1:, -1] = x[2::-1, 0].
  EXPECT_EQ(nested.to_doubles(),
            (std::vector<double>{value.at(2 * 5), value.at(1 * 5), value.at(0)}));
}

TEST(Subtensor, SymbolicBoundsAreReadAtCallTime) {
  Variable x = matrix(DType::Float32, "x");
  Variable start = scalar(DType::Int64, "start");
  Variable stop = scalar(DType::Int64, "stop");
  Variable step = scalar(DType::Int8, "step");
  Variable y = subtensor(x, {slice(start, stop, step)});
  Variable row = subtensor(x, {start});
  EXPECT_EQ(y.owner()->op_string(), "Subtensor{int64:int64:int8}");
  EXPECT_EQ(row.owner()->op_string(), "Subtensor{int64}");
  EXPECT_EQ(subtensor(x, {slice(start), slice()}).owner()->op_string(), "Subtensor{int64:, :}");
  const Tensor value = arange(DType::Float32, {5, 2});
  const auto outs =
      testing::run_graph({x, start, stop, step}, {y, row},
                         {value, Tensor::scalar(-1, DType::Int64), Tensor::scalar(0, DType::Int64),
                          Tensor::scalar(-2, DType::Int8)});
  EXPECT_EQ(outs[0].to_doubles(), (std::vector<double>{8, 9, 4, 5}));  // rows 4, 2
  EXPECT_EQ(outs[1].to_doubles(), (std::vector<double>{8, 9}));        // row -1
  EXPECT_TRUE(testing::fast_matches_reference(
      {x, start, stop, step}, {y, row},
      {value, Tensor::scalar(1, DType::Int64), Tensor::scalar(4, DType::Int64),
       Tensor::scalar(2, DType::Int8)}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [&](const auto& v) { return subtensor(v[0], {slice(v[1], v[2])}); },
      {testing::random_tensor(DType::Float64, {5, 2}, 9), Tensor::scalar(-4, DType::Int64),
       Tensor::scalar(3, DType::Int64)}));
}

TEST(Subtensor, ConstantIndexOutOfRangeIsABuildError) {
  Variable x = tensor(DType::Float32, {3, 4}, "x");
  const std::string what = what_of(
      [&] {
        (void)subtensor(x, {slice(), 4});
      },
      ErrorKind::IndexOutOfRange);
  EXPECT_NE(what.find("index 4"), std::string::npos) << what;
  EXPECT_NE(what.find("axis 1"), std::string::npos) << what;
  EXPECT_NE(what.find("length 4"), std::string::npos) << what;
  EXPECT_NE(what.find("subtensor_test.cpp"), std::string::npos) << what;
}

TEST(Subtensor, SymbolicIndexOutOfRangeIsARunTimeErrorNamingTheNode) {
  Variable x = matrix(DType::Float32, "x");
  Variable i = scalar(DType::Int32, "i");
  Variable y = subtensor(x, {i});
  Function f = function({x, i}, {y});
  for (std::int64_t bad : {3, -4}) {
    const std::string what = what_of(
        [&] {
          (void)f({Tensor::zeros(DType::Float32, {3, 2}),
                   Tensor::scalar(static_cast<double>(bad), DType::Int32)});
        },
        ErrorKind::IndexOutOfRange);
    EXPECT_NE(what.find("index " + std::to_string(bad)), std::string::npos) << what;
    EXPECT_NE(what.find("axis 0 of length 3"), std::string::npos) << what;
    EXPECT_NE(what.find("Subtensor{int32}"), std::string::npos) << what;
    EXPECT_NE(what.find("subtensor_test.cpp"), std::string::npos) << what;
  }
}

TEST(Subtensor, BadIndexListsAreErrors) {
  Variable x = matrix(DType::Float32, "x");
  Variable zero = scalar(DType::Int64, "zero");
  const std::string too_many = what_of(
      [&] {
        (void)subtensor(x, {0, 0, 0});
      },
      ErrorKind::IndexOutOfRange);
  EXPECT_NE(too_many.find("3 indices"), std::string::npos) << too_many;
  (void)what_of([&] { (void)subtensor(x, {slice(none, none, 0)}); }, ErrorKind::InvalidArgument);
  (void)what_of([&] { (void)subtensor(x, {scalar(DType::Float32, "f")}); },
                ErrorKind::TypeMismatch);
  (void)what_of([&] { (void)subtensor(x, {vector(DType::Int64, "v")}); }, ErrorKind::TypeMismatch);
  Variable y = subtensor(x, {slice(none, none, zero)});
  const std::string what = what_of(
      [&] {
        (void)testing::run_graph(
            {x, zero}, {y},
            {Tensor::zeros(DType::Float32, {2, 2}), Tensor::scalar(0, DType::Int64)});
      },
      ErrorKind::InvalidArgument);
  EXPECT_NE(what.find("step"), std::string::npos) << what;
}

}  // namespace
}  // namespace tscope
