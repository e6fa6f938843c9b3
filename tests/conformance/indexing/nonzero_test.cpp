// SPDX-License-Identifier: Apache-2.0
// Conformance of NonZero and of boolean-mask indexing built on it (mask_coordinates): coordinates
// in row-major order for any dtype and layout, NumPy's x[mask] on leading and inner axes, the
// gradient through a mask index, and masks of the wrong shape or dtype at build and run time.
#include "support/test_util.h"

namespace tscope {
namespace {

using testing::contains;
using testing::error_of;
using testing::run_graph;

Tensor bool_tensor(const Dims& shape, const std::vector<double>& values) {
  return Tensor::from_doubles(DType::Bool, shape, values);
}

Tensor ramp(const Dims& shape) {
  std::vector<double> values(static_cast<std::size_t>(shape.product()));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  return Tensor::from_doubles(DType::Float64, shape, values);
}

TEST(NonZero, CoordinatesInRowMajorOrder) {
  Variable mask = tensor(DType::Bool, {kUnknownDim, kUnknownDim}, "mask");
  Variable coordinates = nonzero(mask);
  EXPECT_EQ(coordinates.type(), (Type{DType::Int64, Dims{2, kUnknownDim}}));
  EXPECT_EQ(coordinates.owner()->op_string(), "NonZero");
  const Tensor value = bool_tensor({2, 3}, {0, 1, 1, 1, 0, 0});
  for (const Tensor& layout : {value, testing::non_contiguous_copy(value)}) {
    const Tensor out = run_graph({mask}, {coordinates}, {layout})[0];
    ASSERT_EQ(out.shape(), (Dims{2, 3}));
    EXPECT_EQ(out.to_doubles(), (std::vector<double>{0, 0, 1, 1, 2, 0}));
  }
  // Any dtype: nonzero values count; an all-zero input gives no coordinates.
  Variable numbers = vector(DType::Float32, "numbers");
  const auto out = run_graph({numbers}, {nonzero(numbers)},
                             {Tensor::from_vector<float>({4}, {0.f, -2.5f, 0.f, 3.f})});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{1, 3}));
  EXPECT_EQ(
      run_graph({numbers}, {nonzero(numbers)}, {Tensor::zeros(DType::Float32, {3})})[0].shape(),
      (Dims{1, 0}));
  // A constant's count is static.
  EXPECT_EQ(nonzero(constant(value)).type().dims, (Dims{2, 3}));
  EXPECT_TRUE(op_def("NonZero").traits.zero_gradient);
}

TEST(BooleanMask, SelectsLikeNumpy) {
  Variable x = tensor(DType::Float64, {3, 4}, "x");
  Variable full_mask = tensor(DType::Bool, {3, 4}, "full_mask");
  Variable row_mask = vector(DType::Bool, "row_mask");
  Variable column_mask = vector(DType::Bool, "column_mask");
  // x[full_mask]: the selected elements in row-major order.
  const std::vector<Variable> coordinates = mask_coordinates(x, 0, full_mask);
  Variable elements = advanced_subtensor(x, {coordinates[0], coordinates[1]});
  // x[row_mask]: whole rows.
  Variable rows = advanced_subtensor1(x, mask_coordinates(x, 0, row_mask)[0]);
  // x[:, column_mask]: whole columns.
  Variable columns = advanced_subtensor(x, {slice(), mask_coordinates(x, 1, column_mask)[0]});
  EXPECT_EQ(elements.type().dims, (Dims{kUnknownDim}));
  EXPECT_EQ(rows.type().dims, (Dims{kUnknownDim, 4}));
  EXPECT_EQ(columns.type().dims, (Dims{3, kUnknownDim}));
  const auto out =
      run_graph({x, full_mask, row_mask, column_mask}, {elements, rows, columns},
                {ramp({3, 4}), bool_tensor({3, 4}, {1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0}),
                 bool_tensor({3}, {1, 0, 1}), bool_tensor({4}, {0, 1, 0, 1})});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{0, 3, 9, 10}));
  EXPECT_EQ(out[1].shape(), (Dims{2, 4}));
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(out[2].shape(), (Dims{3, 2}));
  EXPECT_EQ(out[2].to_doubles(), (std::vector<double>{1, 3, 5, 7, 9, 11}));
  // The selection carries the user op of the mask.
  EXPECT_EQ(mask_coordinates(x, 0, row_mask)[0].owner()->provenance().user_op, "boolean_index");
}

TEST(BooleanMask, GradientScattersBackToTheSelectedElements) {
  const Tensor mask = bool_tensor({3, 4}, {1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 1, 0});
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [&](const auto& v) {
        const std::vector<Variable> index = mask_coordinates(v[0], 0, constant(mask));
        return sqr(advanced_subtensor(v[0], {index[0], index[1]}));
      },
      {testing::random_tensor(DType::Float64, {3, 4}, 5)}));
  const Tensor rows = bool_tensor({3}, {0, 1, 1});
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [&](const auto& v) {
        return sqr(advanced_subtensor1(v[0], mask_coordinates(v[0], 0, constant(rows))[0]));
      },
      {testing::random_tensor(DType::Float64, {3, 2}, 6)}));
}

TEST(BooleanMask, WrongShapeOrDtypeIsAnError) {
  Variable x = tensor(DType::Float64, {3, 4}, "x");
  // Static extents that differ: at build time, naming the creation site.
  const Error static_mismatch =
      error_of([&] { (void)mask_coordinates(x, 0, vector(DType::Bool, "m", {2})); });
  EXPECT_EQ(static_mismatch.kind(), ErrorKind::IndexOutOfRange);
  EXPECT_TRUE(contains(static_mismatch, "nonzero_test.cpp")) << static_mismatch.what();
  // Unknown extents: when the function runs, naming the node.
  Variable free = matrix(DType::Float64, "free");
  Variable mask = vector(DType::Bool, "mask");
  Variable selected = advanced_subtensor1(free, mask_coordinates(free, 0, mask)[0]);
  const Error run_mismatch = error_of([&] {
    (void)run_graph({free, mask}, {selected}, {ramp({5, 2}), bool_tensor({3}, {1, 0, 1})});
  });
  EXPECT_EQ(run_mismatch.kind(), ErrorKind::IndexOutOfRange);
  EXPECT_TRUE(contains(run_mismatch, "NonZero")) << run_mismatch.what();
  EXPECT_TRUE(contains(run_mismatch, "nonzero_test.cpp")) << run_mismatch.what();
  EXPECT_EQ(run_graph({free, mask}, {selected}, {ramp({3, 2}), bool_tensor({3}, {1, 0, 1})})[0]
                .to_doubles(),
            (std::vector<double>{0, 1, 4, 5}));
  EXPECT_EQ(error_of([&] { (void)mask_coordinates(x, 0, vector(DType::Int64, "i")); }).kind(),
            ErrorKind::TypeMismatch);
  EXPECT_EQ(error_of([&] { (void)mask_coordinates(x, 1, matrix(DType::Bool, "m")); }).kind(),
            ErrorKind::IndexOutOfRange);
  EXPECT_EQ(error_of([&] { (void)nonzero(scalar(DType::Bool, "s")); }).kind(),
            ErrorKind::TypeMismatch);
}

}  // namespace
}  // namespace tscope
