// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "tscope/core/dims.h"
#include "tscope/core/error.h"

namespace tscope {
namespace {

TEST(Dims, BroadcastFollowsNumpyRules) {
  EXPECT_EQ(broadcast_shapes({3, 1}, {4}), (Dims{3, 4}));
  EXPECT_EQ(broadcast_shapes({}, {2, 5}), (Dims{2, 5}));
  EXPECT_EQ(broadcast_shapes({0, 1}, {1, 7}), (Dims{0, 7}));
}

TEST(Dims, BroadcastMismatchNamesBothShapes) {
  try {
    (void)broadcast_shapes({3, 2}, {4, 2});
    FAIL() << "expected ShapeMismatch";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(error.what()).find("(3, 2)"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("(4, 2)"), std::string::npos);
  }
}

TEST(Dims, ContiguousStridesAreRowMajor) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Dims{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({}), Dims{});
}

TEST(Dims, RankAboveMaximumIsUnsupported) {
  Dims dims = Dims::filled(kMaxRank, 1);
  EXPECT_THROW(dims.push_back(1), Error);
}

TEST(Dims, NormalizeAxisHandlesNegativeAndRejectsOutOfRange) {
  EXPECT_EQ(normalize_axis(-1, 3), 2);
  EXPECT_THROW((void)normalize_axis(3, 3), Error);
  EXPECT_THROW((void)normalize_axis(-4, 3), Error);
}

}  // namespace
}  // namespace tscope
