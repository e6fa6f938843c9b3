// SPDX-License-Identifier: Apache-2.0
// Forward conformance of elementwise ops: fast kernel vs reference kernel on broadcasting,
// non-contiguous, zero-size and mixed-dtype inputs; plus values against closed forms.
#include <cmath>

#include "support/test_util.h"

namespace tscope {
namespace {

using testing::all_close;
using testing::fast_matches_reference;
using testing::random_tensor;

struct BinaryCase {
  std::string name;
  Dims a_shape;
  Dims b_shape;
};

class BinaryElementwise : public ::testing::TestWithParam<std::tuple<std::string, BinaryCase>> {};

TEST_P(BinaryElementwise, FastMatchesReference) {
  const auto& [op, shapes] = GetParam();
  Variable a = tensor(DType::Float32, shapes.a_shape, "a");
  Variable b = tensor(DType::Float32, shapes.b_shape, "b");
  Variable out = elementwise(op, {a, b});
  const Tensor va = random_tensor(DType::Float32, shapes.a_shape, 1, 0.5, 2.0);
  const Tensor vb = random_tensor(DType::Float32, shapes.b_shape, 2, 0.5, 2.0);
  EXPECT_TRUE(fast_matches_reference({a, b}, {out}, {va, vb}));
  EXPECT_TRUE(fast_matches_reference({a, b}, {out},
                                     {testing::non_contiguous_copy(va), testing::non_contiguous_copy(vb)}));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BinaryElementwise,
    ::testing::Combine(::testing::Values("Add", "Sub", "Mul", "TrueDiv", "Maximum", "GE", "Second"),
                       ::testing::Values(BinaryCase{"same_3x4", {3, 4}, {3, 4}},
                                         BinaryCase{"row_bcast", {3, 4}, {1, 4}},
                                         BinaryCase{"col_bcast", {3, 1}, {1, 4}},
                                         BinaryCase{"rank_bcast", {2, 3, 4}, {4}},
                                         BinaryCase{"scalar", {5}, {}},
                                         BinaryCase{"zero_size", {0, 3}, {1, 3}})),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

TEST(Elementwise, ValuesMatchClosedForms) {
  Variable x = vector(DType::Float64, "x");
  const Tensor vx = Tensor::from_vector<double>({4}, {0.5, 1.0, 2.0, 3.0});
  const auto out = testing::run_graph({x}, {exp(x), log(x), sqr(x), -x, relu(x - 1.5)}, {vx});
  for (std::int64_t i = 0; i < 4; ++i) {
    const double v = vx.at(i);
    EXPECT_DOUBLE_EQ(out[0].at(i), std::exp(v));
    EXPECT_DOUBLE_EQ(out[1].at(i), std::log(v));
    EXPECT_DOUBLE_EQ(out[2].at(i), v * v);
    EXPECT_DOUBLE_EQ(out[3].at(i), -v);
    EXPECT_DOUBLE_EQ(out[4].at(i), std::max(v - 1.5, 0.0));
  }
}

TEST(Elementwise, MixedDtypesPromote) {
  Variable i = vector(DType::Int32, "i");
  Variable f = vector(DType::Float32, "f");
  Variable sum_if = i + f;
  EXPECT_EQ(sum_if.dtype(), DType::Float32);
  Variable ratio = i / i;
  EXPECT_EQ(ratio.dtype(), DType::Float64);
  const auto out = testing::run_graph({i, f}, {sum_if, ratio},
                                      {Tensor::from_vector<std::int32_t>({2}, {3, 4}),
                                       Tensor::from_vector<float>({2}, {0.5f, 0.25f})});
  EXPECT_TRUE(all_close(out[0], Tensor::from_vector<float>({2}, {3.5f, 4.25f})));
  EXPECT_TRUE(all_close(out[1], Tensor::from_vector<double>({2}, {1.0, 1.0})));
}

TEST(Elementwise, NumberOperandsTakeVariableDtype) {
  Variable x = vector(DType::Float32, "x");
  EXPECT_EQ((2 * x).dtype(), DType::Float32);
  EXPECT_EQ((x * 0.5).dtype(), DType::Float32);
  Variable n = vector(DType::Int64, "n");
  EXPECT_EQ((n + 1).dtype(), DType::Int64);
  EXPECT_EQ((n * 0.5).dtype(), DType::Float64);
}

TEST(Elementwise, StaticShapeMismatchIsReportedAtBuildTime) {
  Variable a = tensor(DType::Float32, {3, 4}, "a");
  Variable b = tensor(DType::Float32, {5, 4}, "b");
  try {
    (void)(a + b);
    FAIL() << "expected ShapeMismatch";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    const std::string text = error.what();
    EXPECT_NE(text.find("(3, 4)"), std::string::npos) << text;
    EXPECT_NE(text.find("elementwise_forward_test.cpp"), std::string::npos) << text;
  }
}

TEST(Elementwise, RuntimeShapeMismatchNamesNodeAndShapes) {
  Variable a = matrix(DType::Float32, "a");
  Variable b = matrix(DType::Float32, "b");
  Variable out = a * b;
  Function f = function({a, b}, {out});
  try {
    (void)f({Tensor::zeros(DType::Float32, {2, 3}), Tensor::zeros(DType::Float32, {2, 4})});
    FAIL() << "expected ShapeMismatch";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    const std::string text = error.what();
    EXPECT_NE(text.find("Elemwise{mul,no_inplace}(a, b)"), std::string::npos) << text;
    EXPECT_NE(text.find("(2, 3)"), std::string::npos) << text;
    EXPECT_NE(text.find("elementwise_forward_test.cpp"), std::string::npos) << text;
  }
}

TEST(Elementwise, PrintedNamesReadLikeTheano) {
  Variable x = vector(DType::Float32, "x");
  EXPECT_EQ((x + x).owner()->op_string(), "Elemwise{add,no_inplace}");
  EXPECT_EQ(cast(x, DType::Int32).owner()->op_string(), "Elemwise{cast{int32},no_inplace}");
}

}  // namespace
}  // namespace tscope
