// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "tscope/core/tensor.h"

namespace tscope {
namespace {

TEST(Tensor, AllocationIsAlignedAndCounted) {
  const AllocatorStats before = default_allocator().stats();
  {
    Tensor t = Tensor::empty(DType::Float32, {3, 5});
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.raw_data()) % kTensorAlignment, 0u);
    EXPECT_EQ(default_allocator().stats().live_bytes, before.live_bytes + 60);
  }
  EXPECT_EQ(default_allocator().stats().live_bytes, before.live_bytes);
}

TEST(Tensor, TransposedViewSharesBufferAndReadsStrided) {
  Tensor t = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor transposed = t.view({3, 2}, {1, 3}, 0);
  EXPECT_EQ(transposed.buffer(), t.buffer());
  EXPECT_FALSE(transposed.is_contiguous());
  EXPECT_EQ(transposed.to_doubles(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_TRUE(transposed.contiguous().is_contiguous());
  EXPECT_EQ(transposed.contiguous().to_doubles(), transposed.to_doubles());
}

TEST(Tensor, ReshapeChecksElementCount) {
  Tensor t = Tensor::zeros(DType::Int64, {2, 6});
  EXPECT_EQ(t.reshaped({3, 4}).shape(), (Dims{3, 4}));
  EXPECT_THROW((void)t.reshaped({5}), Error);
}

TEST(Tensor, AsTypeConverts) {
  Tensor t = Tensor::from_vector<double>({3}, {1.7, -2.2, 0.0});
  EXPECT_EQ(t.astype(DType::Int32).to_doubles(), (std::vector<double>{1, -2, 0}));
  EXPECT_EQ(t.astype(DType::Bool).to_doubles(), (std::vector<double>{1, 1, 0}));
}

TEST(Tensor, WrongDtypeAccessThrows) {
  Tensor t = Tensor::zeros(DType::Float32, {2});
  EXPECT_THROW((void)t.data<double>(), Error);
}

TEST(Tensor, ZeroSizeTensorIsValid) {
  Tensor t = Tensor::zeros(DType::Float32, {0, 4});
  EXPECT_EQ(t.numel(), 0);
  EXPECT_TRUE(t.defined());
}

}  // namespace
// Out-of-range and NaN doubles stored into integer tensors saturate (NaN: 0) instead of invoking
// undefined behaviour (found by fuzzing the ONNX loader under UBSan).
TEST(Tensor, DoublesOutsideAnIntegerRangeSaturate) {
  const Tensor big = Tensor::full(DType::Int64, {2}, 9.3e18);
  EXPECT_EQ(big.data<std::int64_t>()[0], std::numeric_limits<std::int64_t>::max());
  const Tensor values = Tensor::from_doubles(DType::Int32, {3}, {-1e12, std::nan(""), 7.9});
  EXPECT_EQ(values.data<std::int32_t>()[0], std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(values.data<std::int32_t>()[1], 0);
  EXPECT_EQ(values.data<std::int32_t>()[2], 7);
}

}  // namespace tscope
