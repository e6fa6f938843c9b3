// SPDX-License-Identifier: Apache-2.0
// Static shapes too large to address are rejected where they are made: at a graph input, and at
// the node whose type rule produced them.
#include <string>

#include "support/test_util.h"
#include "tscope/ops/shape.h"

namespace tscope {
namespace {

using tscope::testing::contains;
using tscope::testing::error_of;

constexpr std::int64_t kTwoTo32 = std::int64_t{1} << 32;

TEST(TypeExtents, InputWhoseCountOverflowsNamesTheInput) {
  const Error error = error_of([] { (void)tensor(DType::Float32, {kTwoTo32, kTwoTo32}, "x"); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_NE(std::string(error.what()).find("input 'x': the element count of shape "
                                           "(4294967296, 4294967296) overflows"),
            std::string::npos)
      << error.what();
}

TEST(TypeExtents, UnknownDimsAreSkipped) {
  const Variable x = tensor(DType::Float32, {kUnknownDim, kTwoTo32}, "x");
  EXPECT_EQ(x.type().dims[1], kTwoTo32);
}

TEST(TypeExtents, NegativeInputDimOtherThanUnknownIsRejected) {
  EXPECT_EQ(error_of([] { (void)tensor(DType::Float32, {2, -5}, "x"); }).kind(),
            ErrorKind::InvalidArgument);
}

TEST(TypeExtents, InferredShapeThatOverflowsNamesTheNode) {
  const Variable value = scalar(DType::Float32, "v");
  const Error error = error_of([&] { (void)alloc(value, {kTwoTo32, kTwoTo32}); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_NE(std::string(error.what()).find("Alloc output 0: the element count"), std::string::npos)
      << error.what();
  EXPECT_FALSE(error.context().empty());
}

TEST(TypeExtents, JoinExtentThatOverflowsIsAnError) {
  // Int8: 2^62 bytes each fit; the joined extent 2^63 does not.
  const Variable a = tensor(DType::Int8, {INT64_MAX / 2 + 1}, "a");
  const Error error = error_of([&] { (void)join(0, {a, a}); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_NE(std::string(error.what()).find("Join: output extent"), std::string::npos)
      << error.what();
}

}  // namespace
}  // namespace tscope
