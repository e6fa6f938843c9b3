// SPDX-License-Identifier: Apache-2.0
// LayerNorm: the fast kernel against the reference loops (with and without gamma and beta, one
// or several normalised axes, broadcast and strided parameters, rows long and many), values
// against the definition, gradients by finite differences, and bad input.
#include <cmath>
#include <ostream>

#include "support/test_util.h"

namespace tscope {
namespace {

struct LayerNormCase {
  std::string name;
  Dims shape;
  std::int64_t axis;
  Dims parameter;  ///< shape of gamma and beta
};

void PrintTo(const LayerNormCase& c, std::ostream* os) { *os << c.name; }

class LayerNormOps : public ::testing::TestWithParam<LayerNormCase> {};

TEST_P(LayerNormOps, FastKernelMatchesReference) {
  const LayerNormCase& c = GetParam();
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const double tolerance = dtype == DType::Float32 ? 1e-5 : 1e-12;
    for (bool strided : {false, true}) {
      Variable x = tensor(dtype, c.shape, "x");
      Variable gamma = tensor(dtype, c.parameter, "gamma");
      Variable beta = tensor(dtype, c.parameter, "beta");
      Tensor vx = testing::random_tensor(dtype, c.shape, 3, -4.0, 4.0);
      Tensor vgamma = testing::random_tensor(dtype, c.parameter, 4, 0.5, 2.0);
      Tensor vbeta = testing::random_tensor(dtype, c.parameter, 5);
      if (strided) {
        vx = testing::non_contiguous_copy(vx);
        vgamma = testing::non_contiguous_copy(vgamma);
      }
      const LayerNormOptions options{.axis = c.axis, .epsilon = 1e-5};
      EXPECT_TRUE(testing::fast_matches_reference(
          {x, gamma, beta},
          {layer_norm(x, gamma, beta, options), layer_norm(x, gamma, Variable(), options),
           layer_norm(x, Variable(), beta, options),
           layer_norm(x, Variable(), Variable(), options)},
          {vx, vgamma, vbeta}, tolerance, tolerance))
          << (strided ? "strided " : "contiguous ") << dtype_name(dtype);
    }
  }
}

std::vector<LayerNormCase> layer_norm_cases() {
  return {{"rows", {5, 3}, -1, {3}},
          {"one_element_rows", {4, 1}, -1, {1}},
          {"vector", {6}, 0, {6}},
          {"rank3_last_axis", {2, 3, 5}, -1, {5}},
          {"rank3_two_axes", {2, 3, 5}, 1, {3, 5}},
          {"rank3_two_axes_vector_parameters", {2, 3, 5}, 1, {5}},
          {"rank3_broadcast_parameters", {2, 3, 5}, 1, {3, 1}},
          {"scalar_parameters", {3, 4}, -1, {1}},
          // Rows longer than the unrolled loops, and enough of them to run in parallel.
          {"long_rows", {64, 1001}, -1, {1001}},
          {"many_rows", {1500, 37}, -1, {37}},
          {"empty", {0, 5}, -1, {5}}};
}

INSTANTIATE_TEST_SUITE_P(Cases,
                         LayerNormOps,
                         ::testing::ValuesIn(layer_norm_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(LayerNorm, MatchesItsDefinition) {
  Variable x = matrix(DType::Float64, "x");
  Variable gamma = vector(DType::Float64, "gamma");
  Variable beta = vector(DType::Float64, "beta");
  const Tensor vx = Tensor::from_vector<double>({2, 4}, {1, 2, 3, 4, 10, 10, 10, 10});
  const Tensor vgamma = Tensor::from_vector<double>({4}, {1, 2, 3, 4});
  const Tensor vbeta = Tensor::from_vector<double>({4}, {0.5, 0, 0, -1});
  const double epsilon = 0.25;
  const auto out = testing::run_graph(
      {x, gamma, beta}, {layer_norm(x, gamma, beta, {.epsilon = epsilon})}, {vx, vgamma, vbeta});
  // Row 0: mean 2.5, population variance 1.25. Row 1: constant, so only beta remains.
  const double inverse_std = 1.0 / std::sqrt(1.25 + epsilon);
  const double expected[] = {-1.5 * inverse_std * 1 + 0.5,
                             -0.5 * inverse_std * 2,
                             0.5 * inverse_std * 3,
                             1.5 * inverse_std * 4 - 1,
                             0.5,
                             0,
                             0,
                             -1};
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(out[0].at(i), expected[i], 1e-12) << i;
}

TEST(LayerNorm, Float32StatisticsStayAccurateFarFromZero) {
  // A large offset with a small spread: the statistics are accumulated in double.
  std::vector<float> values;
  for (int i = 0; i < 512; ++i) values.push_back(1000.0f + static_cast<float>(i % 7) * 0.01f);
  Variable x = matrix(DType::Float32, "x");
  const Tensor vx = Tensor::from_vector<float>({1, 512}, values);
  const auto fast = testing::run_graph({x}, {layer_norm(x, Variable(), Variable())}, {vx});
  const auto reference =
      testing::run_graph({x}, {layer_norm(x, Variable(), Variable())}, {vx}, true);
  EXPECT_TRUE(testing::all_close(fast[0], reference[0], 1e-4, 1e-4));
}

TEST(LayerNormGradients, MatchFiniteDifferences) {
  const Tensor x = testing::random_tensor(DType::Float64, {3, 4}, 1, -2.0, 2.0);
  const Tensor gamma = testing::random_tensor(DType::Float64, {4}, 2, 0.5, 1.5);
  const Tensor beta = testing::random_tensor(DType::Float64, {4}, 3);
  const Tensor x3 = testing::random_tensor(DType::Float64, {2, 3, 4}, 4, -2.0, 2.0);
  const Tensor gamma31 = testing::random_tensor(DType::Float64, {3, 1}, 5, 0.5, 1.5);
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return layer_norm(v[0], Variable(), Variable()); }, {x}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return layer_norm(v[0], v[1], v[2], {.epsilon = 1e-3}); },
      {x, gamma, beta}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return layer_norm(v[0], v[1], v[2], {.axis = 1}); },
      {x3, gamma31, beta}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return layer_norm(v[0], Variable(), v[1]); }, {x, beta}));
}

TEST(LayerNormErrors, BadInputsAreTypeAndShapeErrors) {
  EXPECT_EQ(testing::error_of([] {
              (void)layer_norm(matrix(DType::Int32, "i"), Variable(), Variable());
            }).kind(),
            ErrorKind::TypeMismatch);
  Variable x = tensor(DType::Float32, {2, 3, 4}, "x");
  EXPECT_EQ(testing::error_of([&] {
              (void)layer_norm(x, vector(DType::Float64, "g", {4}), Variable());
            }).kind(),
            ErrorKind::TypeMismatch);
  EXPECT_EQ(testing::error_of([&] {
              (void)layer_norm(x, vector(DType::Float32, "g", {3}), Variable());
            }).kind(),
            ErrorKind::ShapeMismatch);
  // gamma may not broadcast over the axes that are not normalised.
  EXPECT_EQ(testing::error_of([&] {
              (void)layer_norm(x, matrix(DType::Float32, "g", {3, 4}), Variable());
            }).kind(),
            ErrorKind::ShapeMismatch);
  EXPECT_EQ(
      testing::error_of([&] { (void)layer_norm(x, Variable(), Variable(), {.axis = 3}); }).kind(),
      ErrorKind::IndexOutOfRange);
}

TEST(LayerNormErrors, RunTimeShapeMismatchNamesTheNode) {
  Variable x = matrix(DType::Float32, "x");
  Variable gamma = vector(DType::Float32, "gamma");
  Function f = function({x, gamma}, {layer_norm(x, gamma, Variable())});
  const Error error = testing::error_of([&] {
    (void)f({Tensor::zeros(DType::Float32, {2, 3}), Tensor::zeros(DType::Float32, {4})});
  });
  EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
  EXPECT_TRUE(testing::contains(error, "layer_norm_test.cpp")) << error.what();
}

TEST(LayerNorm, ProfileNameAndCost) {
  Variable x = tensor(DType::Float32, {2, 3, 4}, "x");
  Variable gamma = vector(DType::Float32, "gamma", {4});
  const Variable y = layer_norm(x, gamma, Variable(), {.epsilon = 1e-6});
  EXPECT_EQ(y.owner()->op_string(), "LayerNorm{2,1e-06}");
  const OpDef& op = op_def("LayerNorm");
  const std::vector<Dims> shapes = {Dims{2, 3, 4}, Dims{4}};
  const std::vector<DType> dtypes = {DType::Float32, DType::Float32};
  const Cost cost =
      op.cost(CostContext{op, shapes, {shapes.data(), 1}, dtypes, y.owner()->attrs()});
  EXPECT_EQ(cost.flops, 8.0 * 24);
  EXPECT_EQ(cost.bytes, (2.0 * 24 + 4) * 4);
}

}  // namespace
}  // namespace tscope
