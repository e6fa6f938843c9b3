// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>

#include "support/test_util.h"
#include "tscope/core/checked_math.h"
#include "tscope/core/tensor.h"

namespace tscope {
namespace {

using tscope::testing::contains;
using tscope::testing::error_of;

constexpr std::int64_t kTwoTo32 = std::int64_t{1} << 32;

TEST(CheckedMath, ProductOfFittingShapes) {
  EXPECT_EQ(checked_product(Dims{2, 3, 4}, "test"), 24);
  EXPECT_EQ(checked_product(Dims{}, "test"), 1);
  EXPECT_EQ(checked_product(Dims{0, 5}, "test"), 0);
  EXPECT_EQ(checked_byte_count(Dims{2, 3}, DType::Float64, "test"), 48);
}

TEST(CheckedMath, OverflowNamesTheValueAndWhereItCameFrom) {
  const Error error =
      error_of([] { (void)checked_product(Dims{kTwoTo32, kTwoTo32}, "input 'x'"); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(contains(error, "input 'x': the element count of shape (4294967296, 4294967296) "
                              "overflows a 64-bit count"))
      << error.what();
}

TEST(CheckedMath, CallerChoosesTheKind) {
  const Error error = error_of(
      [] { (void)checked_product(Dims{kTwoTo32, kTwoTo32}, "'a.npy'", ErrorKind::Parse); });
  EXPECT_EQ(error.kind(), ErrorKind::Parse);
}

TEST(CheckedMath, NegativeExtentIsNamed) {
  const Error error = error_of([] { (void)checked_product(Dims{3, -2}, "test"); });
  EXPECT_TRUE(contains(error, "negative extent -2 in shape (3, -2)")) << error.what();
}

// A zero extent makes the count 0, but the strides of the other axes must still fit.
TEST(CheckedMath, ZeroExtentDoesNotHideStrideOverflow) {
  const Error error =
      error_of([] { (void)checked_product(Dims{0, kTwoTo32, kTwoTo32}, "test"); });
  EXPECT_TRUE(contains(error, "test: the product of the non-zero extents of shape "
                              "(0, 4294967296, 4294967296) overflows"))
      << error.what();
}

TEST(CheckedMath, ByteCountOverflowNamesTheDType) {
  // 2^62 elements fit in int64; 2^62 float32 values need 2^64 bytes.
  const Error error = error_of([] {
    (void)checked_byte_count(Dims{std::int64_t{1} << 60, 4}, DType::Float32, "output 0");
  });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(contains(error, "output 0: shape (1152921504606846976, 4) of float32 needs "
                              "4611686018427387904 * 4 bytes"))
      << error.what();
}

TEST(CheckedMath, MulAndAddReportOverflow) {
  EXPECT_EQ(checked_mul(3, 4, "test"), 12);
  EXPECT_EQ(checked_add(3, 4, "test"), 7);
  EXPECT_TRUE(contains(error_of([] { (void)checked_mul(kTwoTo32, kTwoTo32, "Tile"); }),
                       "Tile: 4294967296 * 4294967296 overflows"));
  EXPECT_TRUE(contains(error_of([] { (void)checked_add(INT64_MAX, 1, "Join"); }),
                       "Join: 9223372036854775807 + 1 overflows"));
}

// Dims::product() is for checked shapes; a wrapped count is a missed check, never a small number.
TEST(CheckedMath, UncheckedProductThrowsInternalInsteadOfWrapping) {
  const Dims huge{kTwoTo32, kTwoTo32};
  EXPECT_EQ(error_of([&] { (void)huge.product(); }).kind(), ErrorKind::Internal);
}

TEST(TensorLimits, EmptyRejectsAShapeWhoseCountOverflows) {
  // Used to wrap to 0 elements and return a 0-byte buffer with this shape.
  const Error error = error_of([] { (void)Tensor::empty(DType::Float32, {kTwoTo32, kTwoTo32}); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(contains(error, "(4294967296, 4294967296)")) << error.what();
}

TEST(TensorLimits, EmptyRejectsNegativeExtents) {
  EXPECT_EQ(error_of([] { (void)Tensor::empty(DType::Float32, {2, -1}); }).kind(),
            ErrorKind::InvalidArgument);
}

TEST(TensorLimits, FailedAllocationIsOutOfMemoryWithTheByteCount) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer aborts on this request unless allocator_may_return_null=1";
#endif
  // 2^60 bytes: a valid count that no machine can allocate.
  const Error error =
      error_of([] { (void)Tensor::empty(DType::Float32, {std::int64_t{1} << 58}); });
  EXPECT_EQ(error.kind(), ErrorKind::OutOfMemory);
  EXPECT_TRUE(contains(error, "out of memory allocating 1152921504606846976 bytes"))
      << error.what();
}

TEST(TensorLimits, ReshapeRejectsAShapeWhoseCountWraps) {
  // (2^32, 2^32) wraps to 0 elements: it must not become a view of this empty tensor.
  const Tensor empty = Tensor::empty(DType::Float32, {0});
  EXPECT_EQ(error_of([&] { (void)empty.reshaped({kTwoTo32, kTwoTo32}); }).kind(),
            ErrorKind::InvalidArgument);
}

}  // namespace
}  // namespace tscope
