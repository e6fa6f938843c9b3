// SPDX-License-Identifier: Apache-2.0
#include "support/test_util.h"

namespace tscope {
namespace {

Tensor arange(const Dims& shape) {
  std::vector<double> values(static_cast<std::size_t>(shape.product()));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  return Tensor::from_doubles(DType::Float64, shape, values);
}

Tensor int_array(const Dims& shape, std::vector<std::int64_t> values) {
  return Tensor::from_vector<std::int64_t>(shape, values);
}

TEST(AdvancedSubtensor, ArraysOnTrailingAxesPairUpElementwise) {
  // x[:, a, b] with x of shape (3, 4, 5): result (3, 2), element [i, k] = x[i, a[k], b[k]].
  Variable x = tensor(DType::Float64, {3, 4, 5}, "x");
  Variable a = vector(DType::Int64, "a");
  Variable b = vector(DType::Int32, "b");
  Variable y = advanced_subtensor(x, {slice(), a, b});
  EXPECT_EQ(y.owner()->op_string(), "AdvancedSubtensor");
  EXPECT_EQ(y.type().dims, (Dims{3, kUnknownDim}));
  const auto out = testing::run_graph({x, a, b}, {y},
                                      {arange({3, 4, 5}), int_array({2}, {3, -4}),
                                       Tensor::from_vector<std::int32_t>({2}, {-1, 2})})[0];
  ASSERT_EQ(out.shape(), (Dims{3, 2}));
  std::vector<double> expected;
  for (int i = 0; i < 3; ++i) {
    expected.push_back(i * 20 + 3 * 5 + 4);
    expected.push_back(i * 20 + 0 * 5 + 2);
  }
  EXPECT_EQ(out.to_doubles(), expected);
}

TEST(AdvancedSubtensor, IndexArraysBroadcastAndKeepTheirPlace) {
  // x[a, b] with a (2, 1) and b (3,): result (2, 3, 5), element [i, j, k] = x[a[i], b[j], k].
  Variable x = tensor(DType::Float64, {3, 4, 5}, "x");
  Variable a = tensor(DType::Int64, {2, 1}, "a");
  Variable b = tensor(DType::Int64, {3}, "b");
  Variable y = advanced_subtensor(x, {a, b, slice(1, none, 2)});
  EXPECT_EQ(y.type().dims, (Dims{2, 3, 2}));
  const std::vector<std::int64_t> a_values{2, 0};
  const std::vector<std::int64_t> b_values{1, 3, 1};
  const auto out = testing::run_graph(
      {x, a, b}, {y},
      {arange({3, 4, 5}), int_array({2, 1}, a_values), int_array({3}, b_values)})[0];
  ASSERT_EQ(out.shape(), (Dims{2, 3, 2}));
  std::vector<double> expected;
  for (std::int64_t i : a_values) {
    for (std::int64_t j : b_values) {
      for (int k = 1; k < 5; k += 2) expected.push_back(static_cast<double>(i * 20 + j * 5 + k));
    }
  }
  EXPECT_EQ(out.to_doubles(), expected);
}

TEST(AdvancedSubtensor, MatrixIndexOnAxisZeroAndIntegerConstants) {
  Variable x = tensor(DType::Float64, {3, 4}, "x");
  Variable rows = tensor(DType::Int64, {2, 2}, "rows");
  const Tensor rows_value = int_array({2, 2}, {0, 2, 2, 1});
  const auto outs = testing::run_graph(
      {x, rows}, {advanced_subtensor(x, {rows}), advanced_subtensor(x, {rows, -1})},
      {arange({3, 4}), rows_value});
  ASSERT_EQ(outs[0].shape(), (Dims{2, 2, 4}));
  ASSERT_EQ(outs[1].shape(), (Dims{2, 2}));
  EXPECT_EQ(outs[1].to_doubles(), (std::vector<double>{3, 11, 11, 7}));
  // Same rows as the axis-0 gather of the flattened index.
  Variable flat = vector(DType::Int64, "flat");
  const auto gathered = testing::run_graph({x, flat}, {advanced_subtensor1(x, flat)},
                                           {arange({3, 4}), int_array({4}, {0, 2, 2, 1})})[0];
  EXPECT_EQ(outs[0].to_doubles(), gathered.to_doubles());
}

TEST(AdvancedSubtensor, NonContiguousInputsAndEmptyIndexArrays) {
  Variable x = matrix(DType::Float64, "x");
  Variable a = vector(DType::Int64, "a");
  Variable y = advanced_subtensor(x, {slice(none, none, -1), a});
  const Tensor x_value = testing::random_tensor(DType::Float64, {3, 4}, 51);
  const Tensor a_value = int_array({3}, {3, 0, 3});
  const Tensor expected = testing::run_graph({x, a}, {y}, {x_value, a_value})[0];
  const Tensor strided = testing::run_graph(
      {x, a}, {y},
      {testing::non_contiguous_copy(x_value), testing::non_contiguous_copy(a_value)})[0];
  EXPECT_TRUE(testing::all_close(strided, expected));
  ASSERT_EQ(expected.shape(), (Dims{3, 3}));
  EXPECT_EQ(expected.at(1), x_value.at(2 * 4 + 0));  // row 2 (reversed), column a[1] = 0
  const Tensor empty = testing::run_graph({x, a}, {y}, {x_value, int_array({0}, {})})[0];
  EXPECT_EQ(empty.shape(), (Dims{3, 0}));
}

TEST(AdvancedSubtensor, GradientsMatchNumericWithRepeatedIndices) {
  const Tensor x = testing::random_tensor(DType::Float64, {3, 4, 2}, 61);
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) {
        return advanced_subtensor(v[0], {slice(), v[1], v[2]});
      },
      {x, int_array({2, 2}, {1, 1, 3, 1}), int_array({2}, {0, 0})}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return advanced_inc_subtensor(v[0], {v[1]}, v[2]); },
      {x, int_array({3}, {2, 0, 2}), testing::random_tensor(DType::Float64, {3, 4, 2}, 62)}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) {
        return advanced_inc_subtensor(v[0], {slice(1), v[1]}, v[2]);
      },
      {x, int_array({2}, {-1, -1}), testing::random_tensor(DType::Float64, {2}, 63)}));
}

TEST(AdvancedIncSubtensor, RepeatedElementsAccumulate) {
  Variable x = matrix(DType::Float64, "x");
  Variable a = vector(DType::Int64, "a");
  Variable b = vector(DType::Int64, "b");
  Variable y = advanced_inc_subtensor(x, {a, b}, constant(Tensor::scalar(1.0)));
  EXPECT_EQ(y.owner()->op_string(), "AdvancedIncSubtensor{no_inplace,inc}");
  const auto out =
      testing::run_graph({x, a, b}, {y},
                         {Tensor::zeros(DType::Float64, {2, 2}), int_array({4}, {0, 1, 0, 0}),
                          int_array({4}, {1, 0, 1, -1})})[0];
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{0, 3, 1, 0}));
}

TEST(AdvancedSubtensor, UnsupportedAndOutOfRangeIndicesAreErrors) {
  Variable x = tensor(DType::Float32, {3, 4, 5}, "x");
  Variable a = vector(DType::Int64, "a");
  Variable b = vector(DType::Int64, "b");
  Variable s = scalar(DType::Int64, "s");
  try {
    (void)advanced_subtensor(x, {a, slice(), b});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(error.what()).find("advanced_subtensor_test.cpp"), std::string::npos);
  }
  EXPECT_THROW((void)advanced_subtensor(x, {slice(s), a}), Error);
  EXPECT_THROW((void)advanced_subtensor(x, {vector(DType::Float32, "f")}), Error);
  EXPECT_THROW(
      (void)advanced_subtensor(x, {tensor(DType::Int64, {2}, "p"), tensor(DType::Int64, {3}, "q")}),
      Error);
  Variable y = advanced_subtensor(x, {slice(), a, b});
  try {
    (void)testing::run_graph(
        {x, a, b}, {y},
        {Tensor::zeros(DType::Float32, {3, 4, 5}), int_array({2}, {0, 1}), int_array({2}, {4, 5})});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::IndexOutOfRange);
    const std::string what = error.what();
    EXPECT_NE(what.find("index 5"), std::string::npos) << what;
    EXPECT_NE(what.find("axis 2 of length 5"), std::string::npos) << what;
    EXPECT_NE(what.find("AdvancedSubtensor(x, a, b)"), std::string::npos) << what;
  }
  try {
    (void)testing::run_graph({x, a, b}, {y},
                             {Tensor::zeros(DType::Float32, {3, 4, 5}), int_array({2}, {0, 1}),
                              int_array({3}, {0, 1, 2})});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(error.what()).find("advanced_subtensor_test.cpp"), std::string::npos);
  }
}

}  // namespace
}  // namespace tscope
