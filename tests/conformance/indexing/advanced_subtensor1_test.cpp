// SPDX-License-Identifier: Apache-2.0
#include "support/test_util.h"

namespace tscope {
namespace {

Tensor indices(std::vector<std::int64_t> values) {
  const auto count = static_cast<std::int64_t>(values.size());
  return Tensor::from_vector<std::int64_t>({count}, values);
}

TEST(AdvancedSubtensor1, GathersRowsWithNegativeAndRepeatedIndices) {
  Variable x = matrix(DType::Float32, "x");
  Variable idx = vector(DType::Int64, "idx");
  Variable y = advanced_subtensor1(x, idx);
  EXPECT_EQ(y.owner()->op_string(), "AdvancedSubtensor1");
  const Tensor x_value = Tensor::from_vector<float>({3, 2}, {0, 1, 2, 3, 4, 5});
  const auto out = testing::run_graph({x, idx}, {y}, {x_value, indices({2, -3, 2, -1})})[0];
  EXPECT_EQ(out.shape(), (Dims{4, 2}));
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{4, 5, 0, 1, 4, 5, 4, 5}));
}

TEST(AdvancedSubtensor1, FastMatchesReferenceOnStridedAndEmptyInputs) {
  Variable x = tensor3(DType::Float64, "x");
  Variable idx = vector(DType::Int32, "idx");
  Variable y = advanced_subtensor1(x, idx);
  const Tensor x_value = testing::random_tensor(DType::Float64, {4, 3, 2}, 21);
  const Tensor idx_value = Tensor::from_vector<std::int32_t>({5}, {3, 0, -1, 1, 3});
  EXPECT_TRUE(testing::fast_matches_reference({x, idx}, {y}, {x_value, idx_value}));
  EXPECT_TRUE(testing::fast_matches_reference(
      {x, idx}, {y},
      {testing::non_contiguous_copy(x_value), testing::non_contiguous_copy(idx_value)}));
  const Tensor none_selected = Tensor::from_vector<std::int32_t>({0}, {});
  const auto out = testing::run_graph({x, idx}, {y}, {x_value, none_selected})[0];
  EXPECT_EQ(out.shape(), (Dims{0, 3, 2}));
  EXPECT_TRUE(testing::fast_matches_reference({x, idx}, {y}, {x_value, none_selected}));
}

TEST(AdvancedSubtensor1, GradientAccumulatesRepeatedRows) {
  const std::vector<Tensor> point{testing::random_tensor(DType::Float64, {4, 3}, 22),
                                  indices({1, 3, 1, -4, 1})};
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return advanced_subtensor1(v[0], v[1]); }, point));
}

TEST(AdvancedSubtensor1, IndexOutOfRangeNamesNodeAxisIndexAndLength) {
  Variable x = matrix(DType::Float32, "x");
  Variable idx = vector(DType::Int64, "idx");
  Variable y = advanced_subtensor1(x, idx);
  for (bool reference : {false, true}) {
    try {
      (void)testing::run_graph({x, idx}, {y},
                               {Tensor::zeros(DType::Float32, {3, 2}), indices({0, 3})}, reference);
      FAIL() << "no error";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::IndexOutOfRange);
      const std::string what = error.what();
      EXPECT_NE(what.find("index 3"), std::string::npos) << what;
      EXPECT_NE(what.find("axis 0 of length 3"), std::string::npos) << what;
      EXPECT_NE(what.find("AdvancedSubtensor1(x, idx)"), std::string::npos) << what;
      EXPECT_NE(what.find("advanced_subtensor1_test.cpp"), std::string::npos) << what;
    }
  }
  EXPECT_THROW((void)advanced_subtensor1(x, matrix(DType::Int64, "m")), Error);
  EXPECT_THROW((void)advanced_subtensor1(x, vector(DType::Float32, "f")), Error);
}

TEST(AdvancedIncSubtensor1, DuplicatesAccumulateAndLastSetWins) {
  Variable x = vector(DType::Float64, "x");
  Variable idx = vector(DType::Int64, "idx");
  Variable y = vector(DType::Float64, "y");
  Variable inc = advanced_inc_subtensor1(x, idx, y);
  Variable set = advanced_set_subtensor1(x, idx, y);
  EXPECT_EQ(inc.owner()->op_string(), "AdvancedIncSubtensor1{no_inplace,inc}");
  EXPECT_EQ(set.owner()->op_string(), "AdvancedIncSubtensor1{no_inplace,set}");
  const std::vector<Tensor> values{Tensor::from_vector<double>({4}, {10, 20, 30, 40}),
                                   indices({1, -3, 3, 1}),
                                   Tensor::from_vector<double>({4}, {1, 2, 3, 4})};
  for (bool reference : {false, true}) {
    const auto outs = testing::run_graph({x, idx, y}, {inc, set}, values, reference);
    EXPECT_EQ(outs[0].to_doubles(), (std::vector<double>{10, 27, 30, 43}));
    EXPECT_EQ(outs[1].to_doubles(), (std::vector<double>{10, 4, 30, 3}));
  }
}

TEST(AdvancedIncSubtensor1, FastMatchesReferenceWithBroadcastValues) {
  Variable x = tensor(DType::Float32, {5, 3}, "x");
  Variable idx = vector(DType::Int64, "idx");
  Variable row = tensor(DType::Float32, {3}, "row");
  Variable column = tensor(DType::Float32, {4, 1}, "column");
  const std::vector<Variable> outputs{advanced_inc_subtensor1(x, idx, row),
                                      advanced_inc_subtensor1(x, idx, column),
                                      advanced_set_subtensor1(x, idx, column)};
  const Tensor x_value = testing::random_tensor(DType::Float32, {5, 3}, 31);
  const Tensor row_value = testing::random_tensor(DType::Float32, {3}, 32);
  const Tensor column_value = testing::random_tensor(DType::Float32, {4, 1}, 33);
  EXPECT_TRUE(testing::fast_matches_reference(
      {x, idx, row, column}, outputs, {x_value, indices({4, 0, 4, -1}), row_value, column_value}));
  EXPECT_TRUE(testing::fast_matches_reference(
      {x, idx, row, column}, outputs,
      {testing::non_contiguous_copy(x_value), indices({2, 2, 2, 2}),
       testing::non_contiguous_copy(row_value), testing::non_contiguous_copy(column_value)}));
}

TEST(AdvancedIncSubtensor1, GradientsMatchNumeric) {
  const Tensor x = testing::random_tensor(DType::Float64, {4, 3}, 41);
  const Tensor y = testing::random_tensor(DType::Float64, {3, 3}, 42);
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return advanced_inc_subtensor1(v[0], v[1], v[2]); },
      {x, indices({2, 0, 2}), y}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return advanced_set_subtensor1(v[0], v[1], v[2]); },
      {x, indices({2, 0, -1}), y}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return advanced_inc_subtensor1(v[0], v[1], v[2]); },
      {x, indices({1, 1}), testing::random_tensor(DType::Float64, {3}, 43)}));
}

TEST(AdvancedIncSubtensor1, BadValuesAndIndicesAreErrors) {
  Variable x = tensor(DType::Float32, {4, 3}, "x");
  Variable idx = tensor(DType::Int64, {2}, "idx");
  try {
    (void)advanced_inc_subtensor1(x, idx, tensor(DType::Float32, {2, 4}, "y"));
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(error.what()).find("advanced_subtensor1_test.cpp"), std::string::npos);
  }
  Variable i = vector(DType::Int64, "i");
  Variable y = vector(DType::Float32, "y");
  try {
    (void)testing::run_graph(
        {x, i, y}, {advanced_inc_subtensor1(x, i, y)},
        {Tensor::zeros(DType::Float32, {4, 3}), indices({-5}), Tensor::zeros(DType::Float32, {3})});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::IndexOutOfRange);
    const std::string what = error.what();
    EXPECT_NE(what.find("index -5"), std::string::npos) << what;
    EXPECT_NE(what.find("axis 0 of length 4"), std::string::npos) << what;
    EXPECT_NE(what.find("AdvancedIncSubtensor1{no_inplace,inc}"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace tscope
