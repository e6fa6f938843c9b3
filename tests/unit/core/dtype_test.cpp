// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "tscope/core/dtype.h"

namespace tscope {
namespace {

TEST(DType, PromotionMatchesDocumentedRules) {
  EXPECT_EQ(promote_types(DType::Int32, DType::Float32), DType::Float32);
  EXPECT_EQ(promote_types(DType::Float32, DType::Float64), DType::Float64);
  EXPECT_EQ(promote_types(DType::Int8, DType::UInt8), DType::Int32);
  EXPECT_EQ(promote_types(DType::Bool, DType::Int64), DType::Int64);
  EXPECT_EQ(promote_types(DType::Int32, DType::Int64), DType::Int64);
}

TEST(DType, NamesRoundTrip) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto dtype = static_cast<DType>(i);
    EXPECT_EQ(parse_dtype(dtype_name(dtype)), dtype);
  }
  EXPECT_FALSE(parse_dtype("float16").has_value());
}

}  // namespace
}  // namespace tscope
