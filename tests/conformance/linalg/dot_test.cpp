// SPDX-License-Identifier: Apache-2.0
#include "support/test_util.h"

namespace tscope {
namespace {

struct DotCase {
  std::string name;
  Dims a;
  Dims b;
};

class DotShapes : public ::testing::TestWithParam<DotCase> {};

TEST_P(DotShapes, BlasMatchesReferenceAndGradients) {
  const DotCase& c = GetParam();
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Variable a = tensor(dtype, c.a, "a");
    Variable b = tensor(dtype, c.b, "b");
    const Tensor va = testing::random_tensor(dtype, c.a, 1);
    const Tensor vb = testing::random_tensor(dtype, c.b, 2);
    EXPECT_TRUE(testing::fast_matches_reference({a, b}, {dot(a, b)}, {va, vb}, 1e-5, 1e-5));
    EXPECT_TRUE(testing::fast_matches_reference(
        {a, b}, {dot(a, b)}, {testing::non_contiguous_copy(va), testing::non_contiguous_copy(vb)}, 1e-5, 1e-5));
  }
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return dot(v[0], v[1]); },
      {testing::random_tensor(DType::Float64, c.a, 3), testing::random_tensor(DType::Float64, c.b, 4)}));
}

INSTANTIATE_TEST_SUITE_P(Cases, DotShapes,
                         ::testing::Values(DotCase{"mm", {3, 4}, {4, 5}}, DotCase{"mv", {3, 4}, {4}},
                                           DotCase{"vm", {4}, {4, 2}}, DotCase{"vv", {4}, {4}},
                                           DotCase{"k0", {2, 0}, {0, 3}}, DotCase{"m1", {1, 3}, {3, 1}}),
                         [](const auto& info) { return info.param.name; });

TEST(Dot, TransposedInputsAvoidCopies) {
  Variable a = matrix(DType::Float32, "a");
  Variable b = matrix(DType::Float32, "b");
  const Tensor va = testing::random_tensor(DType::Float32, {4, 3}, 1);
  const Tensor vb = testing::random_tensor(DType::Float32, {5, 4}, 2);
  EXPECT_TRUE(testing::fast_matches_reference({a, b}, {dot(transpose(a), transpose(b))}, {va, vb}, 1e-5, 1e-5));
}

TEST(Dot, InnerDimensionMismatchNamesShapes) {
  Variable a = matrix(DType::Float32, "a");
  Variable b = matrix(DType::Float32, "b");
  Function f = function({a, b}, {dot(a, b)});
  try {
    (void)f({Tensor::zeros(DType::Float32, {2, 3}), Tensor::zeros(DType::Float32, {4, 2})});
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(error.what()).find("(2, 3)"), std::string::npos) << error.what();
    // The 2-D dot runs as Dot22 after rewriting; the message still names the user's call site.
    EXPECT_NE(std::string(error.what()).find("dot_test.cpp"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("(a, b)"), std::string::npos) << error.what();
  }
}

TEST(Dot, BlasDescriptionNamesTheLibrary) {
  EXPECT_NE(blas_description().find("OpenBLAS"), std::string::npos);
}

}  // namespace
}  // namespace tscope
