// SPDX-License-Identifier: Apache-2.0
#include "support/test_util.h"

namespace tscope {
namespace {

TEST(DimShuffle, TransposeIsAViewWithSwappedStrides) {
  Variable x = matrix(DType::Float32, "x");
  const Tensor value = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor out = testing::run_graph({x}, {transpose(x)}, {value})[0];
  EXPECT_EQ(out.shape(), (Dims{3, 2}));
  EXPECT_EQ(out.buffer(), value.buffer());
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(DimShuffle, InsertAndDropBroadcastableAxes) {
  Variable x = tensor(DType::Float64, {3, 1, 2}, "x");
  Variable y = dimshuffle(x, {2, kNewAxis, 0});
  EXPECT_EQ(y.type().dims, (Dims{2, 1, 3}));
  EXPECT_EQ(y.owner()->op_string(), "DimShuffle{2,x,0}");
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return dimshuffle(v[0], {2, kNewAxis, 0}); },
      {testing::random_tensor(DType::Float64, {3, 1, 2}, 1)}));
}

TEST(DimShuffle, DroppingANonBroadcastableAxisIsAnError) {
  Variable x = matrix(DType::Float32, "x");
  try {
    (void)dimshuffle(x, {0});
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(error.what()).find("dimshuffle_test.cpp"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace tscope
