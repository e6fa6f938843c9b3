// SPDX-License-Identifier: Apache-2.0
// Copies of strided views (Tensor::clone / contiguous()): every element where the element-by-
// element read (Tensor::at) puts it, for permutations, slices with steps, reversed and broadcast
// axes, sizes that are not multiples of the copy's tiles, and every element size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "tscope/core/tensor.h"

namespace tscope {
namespace {

// A tensor whose element i holds i (modulo the dtype's range), so misplaced elements show.
Tensor counting(DType dtype, const Dims& shape) {
  std::vector<double> values(static_cast<std::size_t>(shape.product()));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % 100);
  if (dtype == DType::Bool) {
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % 3 == 0);
  }
  return Tensor::from_doubles(dtype, shape, values);
}

void expect_copy_matches_reads(const Tensor& view) {
  const Tensor copy = view.contiguous();
  ASSERT_TRUE(copy.is_contiguous());
  ASSERT_EQ(copy.shape(), view.shape());
  EXPECT_EQ(copy.to_doubles(), view.to_doubles())
      << view.shape().to_string() << " strides " << view.strides().to_string();
}

// `base` viewed with its axes in `order`.
Tensor permuted(const Tensor& base, const std::vector<int>& order) {
  Dims shape = Dims::filled(base.rank(), 0);
  Dims strides = Dims::filled(base.rank(), 0);
  for (int axis = 0; axis < base.rank(); ++axis) {
    shape[axis] = base.shape()[order[static_cast<std::size_t>(axis)]];
    strides[axis] = base.strides()[order[static_cast<std::size_t>(axis)]];
  }
  return base.view(shape, strides, base.offset());
}

TEST(StridedCopy, EveryPermutationOfEveryElementSize) {
  const Dims shape{3, 37, 1, 33, 5};
  for (DType dtype :
       {DType::Bool, DType::Int8, DType::Int32, DType::Float32, DType::Int64, DType::Float64}) {
    const Tensor base = counting(dtype, shape);
    std::vector<int> order(5);
    std::iota(order.begin(), order.end(), 0);
    do {
      SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " order " << order[0] << order[1]
                                        << order[2] << order[3] << order[4]);
      expect_copy_matches_reads(permuted(base, order));
    } while (std::next_permutation(order.begin(), order.end()));
  }
}

TEST(StridedCopy, SlicesStepsReversalsAndBroadcasts) {
  const Tensor base = counting(DType::Float32, {40, 70});
  // Every other row and every third column.
  expect_copy_matches_reads(base.view({20, 24}, {140, 3}, 0));
  // Columns reversed.
  expect_copy_matches_reads(base.view({40, 70}, {70, -1}, 69));
  // Transposed and rows reversed.
  expect_copy_matches_reads(base.view({70, 40}, {1, -70}, 39 * 70));
  // A row broadcast down a new axis, and a column broadcast across.
  expect_copy_matches_reads(base.view({5, 70}, {0, 1}, 70));
  expect_copy_matches_reads(base.view({40, 9}, {70, 0}, 3));
  // A (batch, channels) value broadcast over two spatial axes (a global pool's gradient): the
  // channels step by one, the broadcast axes merge into runs of one value.
  expect_copy_matches_reads(base.view({2, 35, 4, 5}, {70, 1, 0, 0}, 0));
  // A scalar broadcast to a matrix, a single element, an empty view.
  expect_copy_matches_reads(base.view({4, 6}, {0, 0}, 11));
  expect_copy_matches_reads(base.view({}, {}, 17));
  expect_copy_matches_reads(base.view({0, 5}, {70, 1}, 0));
  // A block of a matrix transposed: tiles cut at both edges.
  expect_copy_matches_reads(base.view({33, 35}, {1, 70}, 2 * 70 + 1));
}

TEST(StridedCopy, RandomViews) {
  std::mt19937 generator(7);
  const Tensor base = counting(DType::Float64, {6, 7, 8, 9});
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int> order{0, 1, 2, 3};
    std::shuffle(order.begin(), order.end(), generator);
    Tensor view = permuted(base, order);
    // A random sub-box with a random step on one axis.
    Dims shape = view.shape();
    Dims strides = view.strides();
    std::int64_t offset = view.offset();
    const int axis = static_cast<int>(generator() % 4);
    const std::int64_t step = 1 + static_cast<std::int64_t>(generator() % 3);
    const std::int64_t start = static_cast<std::int64_t>(generator() % 2);
    shape[axis] = (shape[axis] - start + step - 1) / step;
    offset += start * strides[axis];
    strides[axis] *= step;
    SCOPED_TRACE(trial);
    expect_copy_matches_reads(base.view(shape, strides, offset));
  }
}

}  // namespace
}  // namespace tscope
