// SPDX-License-Identifier: Apache-2.0
#include <ostream>

#include "support/test_util.h"

namespace tscope {
namespace {

struct RegionCase {
  std::string name;
  Dims x_shape;
  IndexList indices;
  Dims y_shape;  // broadcasts to the region
};

void PrintTo(const RegionCase& c, std::ostream* os) { *os << c.name; }

class IncSubtensorRegions : public ::testing::TestWithParam<RegionCase> {};

TEST_P(IncSubtensorRegions, FastMatchesReference) {
  const RegionCase& c = GetParam();
  Variable x = tensor(DType::Float32, c.x_shape, "x");
  Variable y = tensor(DType::Float32, c.y_shape, "y");
  const Tensor x_value = testing::random_tensor(DType::Float32, c.x_shape, 11);
  const Tensor y_value = testing::random_tensor(DType::Float32, c.y_shape, 12);
  const std::vector<Variable> outputs{inc_subtensor(x, c.indices, y),
                                      set_subtensor(x, c.indices, y)};
  EXPECT_TRUE(testing::fast_matches_reference({x, y}, outputs, {x_value, y_value}));
  EXPECT_TRUE(testing::fast_matches_reference(
      {x, y}, outputs,
      {testing::non_contiguous_copy(x_value), testing::non_contiguous_copy(y_value)}));
}

TEST_P(IncSubtensorRegions, GradientsMatchNumeric) {
  const RegionCase& c = GetParam();
  const std::vector<Tensor> point{testing::random_tensor(DType::Float64, c.x_shape, 13),
                                  testing::random_tensor(DType::Float64, c.y_shape, 14)};
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [&](const auto& v) { return inc_subtensor(v[0], c.indices, v[1]); }, point));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [&](const auto& v) { return set_subtensor(v[0], c.indices, v[1]); }, point));
}

INSTANTIATE_TEST_SUITE_P(
    Cases,
    IncSubtensorRegions,
    ::testing::Values(RegionCase{"Rows_4x3_full", {4, 3}, {slice(1, 3)}, {2, 3}},
                      RegionCase{"Rows_4x3_rowBcast", {4, 3}, {slice(1, 3)}, {1, 3}},
                      RegionCase{"Rows_4x3_leadingBcast", {4, 3}, {slice(1, 3)}, {3}},
                      RegionCase{"Scalar_4x3", {4, 3}, {slice(none, none, -2), 1}, {}},
                      RegionCase{
                          "Stepped_5x6", {5, 6}, {slice(-1, 0, -2), slice(1, none, 3)}, {2, 2}},
                      RegionCase{"Element_2x3x4", {2, 3, 4}, {1, -1, 2}, {}},
                      RegionCase{"Empty_4x3", {4, 3}, {slice(3, 1)}, {1, 3}}),
    [](const auto& info) { return info.param.name; });

TEST(IncSubtensor, AddsAndSetsTheRegionOfACopy) {
  Variable x = matrix(DType::Float64, "x");
  Variable y = vector(DType::Float64, "y");
  Variable inc = inc_subtensor(x, {slice(1, 3)}, y);
  Variable set = set_subtensor(x, {slice(none, none, 2), 0}, 7.0 * sum(y));
  EXPECT_EQ(inc.owner()->op_string(), "IncSubtensor{Inc;1:3}");
  EXPECT_EQ(set.owner()->op_string(), "IncSubtensor{Set;::2, 0}");
  const Tensor x_value = Tensor::from_vector<double>({3, 2}, {0, 1, 2, 3, 4, 5});
  const auto outs =
      testing::run_graph({x, y}, {inc, set}, {x_value, Tensor::from_vector<double>({2}, {10, 20})});
  EXPECT_EQ(outs[0].to_doubles(), (std::vector<double>{0, 1, 12, 23, 14, 25}));
  EXPECT_EQ(outs[1].to_doubles(), (std::vector<double>{210, 1, 2, 3, 210, 5}));
  EXPECT_EQ(x_value.to_doubles(), (std::vector<double>{0, 1, 2, 3, 4, 5}));  // x unchanged
}

TEST(IncSubtensor, SymbolicBoundsAndIntegerDtypes) {
  Variable x = vector(DType::Int32, "x");
  Variable start = scalar(DType::Int64, "start");
  Variable y = inc_subtensor(x, {slice(start)}, constant(Tensor::scalar(5, DType::Int32)));
  EXPECT_EQ(y.owner()->op_string(), "IncSubtensor{Inc;int64:}");
  const std::vector<Tensor> values{Tensor::from_vector<std::int32_t>({4}, {1, 2, 3, 4}),
                                   Tensor::scalar(-2, DType::Int64)};
  EXPECT_EQ(testing::run_graph({x, start}, {y}, values)[0].to_doubles(),
            (std::vector<double>{1, 2, 8, 9}));
  EXPECT_TRUE(testing::fast_matches_reference({x, start}, {y}, values));
}

TEST(IncSubtensor, LowerPrecisionValueIsCastAndHigherIsRejected) {
  Variable x = matrix(DType::Float64, "x");
  Variable narrow = vector(DType::Float32, "narrow");
  EXPECT_EQ(inc_subtensor(x, {0}, narrow).dtype(), DType::Float64);
  Variable wide = tensor(DType::Float64, {2}, "wide");
  Variable x32 = matrix(DType::Float32, "x32");
  try {
    (void)set_subtensor(x32, {0}, wide);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::TypeMismatch);
    EXPECT_NE(std::string(error.what()).find("inc_subtensor_test.cpp"), std::string::npos);
  }
}

TEST(IncSubtensor, ValueThatDoesNotFitTheRegionIsAShapeMismatch) {
  Variable x = tensor(DType::Float32, {4, 3}, "x");
  try {
    (void)inc_subtensor(x, {slice(1, 3)}, tensor(DType::Float32, {3, 3}, "y"));
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    const std::string what = error.what();
    EXPECT_NE(what.find("(3, 3)"), std::string::npos) << what;
    EXPECT_NE(what.find("(2, 3)"), std::string::npos) << what;
    EXPECT_NE(what.find("inc_subtensor_test.cpp"), std::string::npos) << what;
  }
  // Known only at call time: an unknown dim of length 1 does not broadcast (Theano's rule).
  Variable m = matrix(DType::Float32, "m");
  Variable v = matrix(DType::Float32, "v");
  try {
    (void)testing::run_graph(
        {m, v}, {inc_subtensor(m, {slice(1, 3)}, v)},
        {Tensor::zeros(DType::Float32, {4, 3}), Tensor::zeros(DType::Float32, {1, 3})});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    const std::string what = error.what();
    EXPECT_NE(what.find("(1, 3)"), std::string::npos) << what;
    EXPECT_NE(what.find("IncSubtensor{Inc;1:3}"), std::string::npos) << what;
  }
}

TEST(IncSubtensor, OutOfRangeIntegerAtRunTimeNamesTheNode) {
  Variable x = matrix(DType::Float32, "x");
  Variable i = scalar(DType::Int64, "i");
  try {
    (void)testing::run_graph(
        {x, i}, {set_subtensor(x, {slice(), i}, constant(Tensor::scalar(1, DType::Float32)))},
        {Tensor::zeros(DType::Float32, {2, 3}), Tensor::scalar(3, DType::Int64)});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::IndexOutOfRange);
    const std::string what = error.what();
    EXPECT_NE(what.find("axis 1 of length 3"), std::string::npos) << what;
    EXPECT_NE(what.find("index 3"), std::string::npos) << what;
    EXPECT_NE(what.find("IncSubtensor{Set;:, int64}"), std::string::npos) << what;
    EXPECT_NE(what.find("inc_subtensor_test.cpp"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace tscope
