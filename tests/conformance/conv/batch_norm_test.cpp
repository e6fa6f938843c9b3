// SPDX-License-Identifier: Apache-2.0
// Batch normalisation: per-channel statistics and normalised values against their definitions,
// running averages as function updates, inference mode, finite-difference gradients (through y
// and through the batch statistics), the oneDNN kernels against the reference ones on edge
// shapes, the impl that runs, and errors.
#include <cmath>

#include "conv_test_util.h"

namespace tscope {
namespace {

using testing::throws_naming;

// Mean and population variance of channel `c` of a (N, C, H, W) tensor.
std::pair<double, double> channel_moments(const Tensor& x, std::int64_t c) {
  const Dims& s = x.shape();
  const std::int64_t plane = s[2] * s[3];
  double total = 0;
  double squares = 0;
  for (std::int64_t n = 0; n < s[0]; ++n) {
    for (std::int64_t i = 0; i < plane; ++i) {
      const double v = x.at((n * s[1] + c) * plane + i);
      total += v;
      squares += v * v;
    }
  }
  const double count = static_cast<double>(s[0] * plane);
  const double mean = total / count;
  return {mean, squares / count - mean * mean};
}

TEST(BatchNorm, TrainingNormalisesEachChannelAndUpdatesRunningAverages) {
  const Dims shape{3, 2, 4, 5};
  Variable x = tensor(DType::Float64, shape, "x");
  Variable gamma = shared(Tensor::from_doubles(DType::Float64, {2}, {2.0, 0.5}), "gamma");
  Variable beta = shared(Tensor::from_doubles(DType::Float64, {2}, {1.0, -1.0}), "beta");
  Variable running_mean = shared(Tensor::zeros(DType::Float64, {2}), "running_mean");
  Variable running_var = shared(Tensor::full(DType::Float64, {2}, 1.0), "running_var");
  const BatchNormTraining bn = batch_norm_train(x, gamma, beta, running_mean, running_var,
                                                {.epsilon = 1e-5, .momentum = 0.25});
  Function f = function({x}, {bn.y, bn.batch_mean, bn.batch_var},
                        {{running_mean, bn.new_running_mean}, {running_var, bn.new_running_var}});
  const Tensor xv = testing::random_tensor(DType::Float64, shape, 1, -3.0, 5.0);
  const std::vector<Tensor> out = f({xv});
  const double count = 3.0 * 4 * 5;
  for (std::int64_t c = 0; c < 2; ++c) {
    const auto [mean, var] = channel_moments(xv, c);
    EXPECT_NEAR(out[1].at(c), mean, 1e-12);
    EXPECT_NEAR(out[2].at(c), var, 1e-12);
    const auto [y_mean, y_var] = channel_moments(out[0], c);
    const double g = c == 0 ? 2.0 : 0.5;
    EXPECT_NEAR(y_mean, c == 0 ? 1.0 : -1.0, 1e-9);
    EXPECT_NEAR(y_var, g * g * var / (var + 1e-5), 1e-9);
    EXPECT_NEAR(running_mean.get_value().at(c), 0.25 * mean, 1e-12);
    EXPECT_NEAR(running_var.get_value().at(c), 0.75 + 0.25 * var * count / (count - 1), 1e-12);
  }
}

TEST(BatchNorm, InferenceUsesTheGivenStatistics) {
  Variable x = tensor(DType::Float64, {2, 3, 2}, "x");
  Variable gamma = vector(DType::Float64, "gamma", {3});
  Variable beta = vector(DType::Float64, "beta", {3});
  Variable mean = vector(DType::Float64, "mean", {3});
  Variable var = vector(DType::Float64, "var", {3});
  Variable y = batch_norm_inference(x, gamma, beta, mean, var, {.epsilon = 0.0});
  const Tensor xv = testing::random_tensor(DType::Float64, {2, 3, 2}, 2);
  const Tensor g = Tensor::from_doubles(DType::Float64, {3}, {1, 2, 3});
  const Tensor b = Tensor::from_doubles(DType::Float64, {3}, {0, 1, 2});
  const Tensor m = Tensor::from_doubles(DType::Float64, {3}, {0.5, -0.5, 0});
  const Tensor v = Tensor::from_doubles(DType::Float64, {3}, {4, 1, 0.25});
  const auto out = testing::run_graph({x, gamma, beta, mean, var}, {y}, {xv, g, b, m, v});
  for (std::int64_t i = 0; i < xv.numel(); ++i) {
    const std::int64_t c = (i / 2) % 3;
    const double expected = (xv.at(i) - m.at(c)) / std::sqrt(v.at(c)) * g.at(c) + b.at(c);
    EXPECT_NEAR(out[0].at(i), expected, 1e-12) << i;
  }
}

TEST(BatchNorm, GradientsMatchFiniteDifferences) {
  const Tensor x = testing::random_tensor(DType::Float64, {3, 2, 2, 3}, 3);
  const Tensor gamma = testing::random_tensor(DType::Float64, {2}, 4, 0.5, 1.5);
  const Tensor beta = testing::random_tensor(DType::Float64, {2}, 5);
  const Tensor stats = testing::random_tensor(DType::Float64, {2}, 6, 0.5, 1.0);
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return batch_norm_train(v[0], v[1], v[2], v[3], v[3]).y; },
      {x, gamma, beta, stats}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return batch_norm_inference(v[0], v[1], v[2], v[3], v[4]); },
      {x, gamma, beta, stats, stats}));
}

TEST(BatchNorm, FastKernelsMatchReferenceAfterAConv) {
  Variable x = tensor(DType::Float32, {2, 3, 6, 5, 4}, "x");
  Variable w = tensor(DType::Float32, {4, 3, 3, 3, 3}, "w");
  Variable gamma = vector(DType::Float32, "gamma", {4});
  Variable beta = vector(DType::Float32, "beta", {4});
  Variable h = conv3d(x, w, {.padding = Padding::same()});
  const BatchNormTraining bn = batch_norm_train(h, gamma, beta, gamma, beta);
  Variable cost = sum(relu(bn.y));
  const std::vector<Variable> g = grad(cost, {x, w, gamma, beta});
  const std::vector<Tensor> values = {testing::random_tensor(DType::Float32, {2, 3, 6, 5, 4}, 1),
                                      testing::random_tensor(DType::Float32, {4, 3, 3, 3, 3}, 2),
                                      testing::random_tensor(DType::Float32, {4}, 3, 0.5, 1.5),
                                      testing::random_tensor(DType::Float32, {4}, 4)};
  EXPECT_TRUE(testing::fast_matches_reference(
      {x, w, gamma, beta}, {bn.y, bn.new_running_var, g[0], g[1], g[2], g[3]}, values, 1e-3, 1e-4));
}

TEST(BatchNorm, ParameterErrorsNameTheShapes) {
  Variable x = tensor(DType::Float32, {2, 3, 4, 4}, "x");
  Variable ok = vector(DType::Float32, "ok", {3});
  Variable wrong = vector(DType::Float32, "wrong", {4});
  EXPECT_TRUE(throws_naming([&] { (void)batch_norm_train(x, wrong, ok, ok, ok); },
                            ErrorKind::ShapeMismatch, {"gamma has 4 values", "(2, 3, 4, 4)"}));
  EXPECT_TRUE(
      throws_naming([&] { (void)batch_norm_inference(x, ok, ok, ok, matrix(DType::Float32)); },
                    ErrorKind::TypeMismatch, {"var", "vector"}));
  EXPECT_TRUE(
      throws_naming([&] { (void)batch_norm_inference(vector(DType::Float32), ok, ok, ok, ok); },
                    ErrorKind::TypeMismatch, {"rank >= 2"}));
}

TEST(BatchNorm, GradientsThroughTheBatchStatisticsMatchFiniteDifferences) {
  const Tensor x = testing::random_tensor(DType::Float64, {2, 3, 5}, 7);
  const Tensor gamma = testing::random_tensor(DType::Float64, {3}, 8, 0.5, 1.5);
  const Tensor beta = testing::random_tensor(DType::Float64, {3}, 9);
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) {
        const BatchNormTraining bn = batch_norm_train(v[0], v[1], v[2], v[1], v[2]);
        return bn.batch_mean * 3.0 + bn.batch_var;
      },
      {x, gamma, beta}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) {
        const BatchNormTraining bn = batch_norm_train(v[0], v[1], v[2], v[1], v[2]);
        return sum(bn.y * bn.y) + sum(bn.batch_var * 2.0);
      },
      {x, gamma, beta}));
}

// oneDNN against the reference loops: rank 2 (a dense layer's (N, C)), rank 3, 4 and 5, batch 1,
// odd extents, a non-contiguous x.
TEST(BatchNorm, FastKernelsMatchReferenceOnEdgeShapes) {
  const std::vector<Dims> shapes = {{7, 3}, {1, 5, 9}, {1, 4, 3, 5}, {3, 2, 3, 1, 5}, {2, 1, 1, 1}};
  std::uint64_t seed = 20;
  for (const Dims& shape : shapes) {
    const Dims channels{shape[1]};
    Variable x = tensor(DType::Float32, shape, "x");
    Variable dy = tensor(DType::Float32, shape, "dy");
    Variable gamma = vector(DType::Float32, "gamma", {shape[1]});
    Variable beta = vector(DType::Float32, "beta", {shape[1]});
    Variable stats = vector(DType::Float32, "stats", {shape[1]});
    const BatchNormTraining bn = batch_norm_train(x, gamma, beta, stats, stats);
    const std::vector<Variable> g = grad(sum(bn.y * dy), {x, gamma, beta});
    Variable inferred = batch_norm_inference(x, gamma, beta, bn.batch_mean, stats);
    const Tensor xv = testing::random_tensor(DType::Float32, shape, ++seed, -2.0, 3.0);
    const std::vector<Tensor> values = {
        shape.rank() == 4 ? testing::non_contiguous_copy(xv) : xv,
        testing::random_tensor(DType::Float32, shape, ++seed),
        testing::random_tensor(DType::Float32, channels, ++seed, 0.5, 1.5),
        testing::random_tensor(DType::Float32, channels, ++seed),
        testing::random_tensor(DType::Float32, channels, ++seed, 0.5, 1.5)};
    EXPECT_TRUE(testing::fast_matches_reference(
        {x, dy, gamma, beta, stats},
        {bn.y, bn.batch_mean, bn.batch_var, g[0], g[1], g[2], inferred}, values, 1e-3, 1e-4))
        << shape.to_string();
  }
}

TEST(BatchNorm, Float32RunsOneDnnAndFloat64TheReference) {
  for (const auto& [dtype, impl] : {std::pair{DType::Float32, "dnnl"}, {DType::Float64, "ref"}}) {
    Variable x = tensor(dtype, {2, 3, 4, 4}, "x");
    Variable p = vector(dtype, "p", {3});
    const BatchNormTraining bn = batch_norm_train(x, p, p, p, p);
    const std::vector<Variable> g = grad(sum(bn.y), {x});
    const std::vector<Tensor> values = {testing::random_tensor(dtype, {2, 3, 4, 4}, 1),
                                        testing::random_tensor(dtype, {3}, 2, 0.5, 1.5)};
    EXPECT_EQ(testing::impls_of({x, p}, {bn.y, g[0]}, values, "BatchNormTrain"), impl);
    EXPECT_EQ(testing::impls_of({x, p}, {bn.y, g[0]}, values, "BatchNormGrad"), impl);
    EXPECT_EQ(testing::impls_of({x, p}, {batch_norm_inference(x, p, p, p, p)}, values,
                                "BatchNormInference"),
              impl);
  }
}

TEST(BatchNorm, SecondDerivativesAreRefusedByName) {
  Variable x = tensor(DType::Float64, {2, 3, 4}, "x");
  Variable p = vector(DType::Float64, "p", {3});
  const BatchNormTraining bn = batch_norm_train(x, p, p, p, p);
  const Variable dx = grad(sum(bn.y * bn.y), {x})[0];
  EXPECT_TRUE(throws_naming([&] { (void)grad(sum(dx), {x}); }, ErrorKind::NotDifferentiable,
                            {"BatchNormGrad"}));
}

TEST(BatchNorm, ChannelCountsAreCheckedWhenRun) {
  Variable x = tensor(DType::Float32, {2, 3, 4}, "x");
  Variable p = vector(DType::Float32, "p");  // length unknown until run
  const BatchNormTraining bn = batch_norm_train(x, p, p, p, p);
  for (const bool reference : {false, true}) {
    EXPECT_TRUE(throws_naming(
        [&] {
          (void)testing::run_graph({x, p}, {bn.y},
                                   {testing::random_tensor(DType::Float32, {2, 3, 4}, 1),
                                    testing::random_tensor(DType::Float32, {4}, 2)},
                                   reference);
        },
        ErrorKind::ShapeMismatch, {"4 values", "3 channels"}));
  }
}

}  // namespace
}  // namespace tscope
