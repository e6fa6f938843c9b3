// SPDX-License-Identifier: Apache-2.0
// Softmax, LogSoftmax, SoftmaxGrad and the cross-entropy losses: fast kernels against reference
// loops, values against their definitions, gradients by finite differences, and bad input.
#include <cmath>
#include <ostream>

#include "support/test_util.h"

namespace tscope {
namespace {

struct NnetCase {
  std::string name;
  Dims shape;
  DType dtype;
  bool strided;
};

void PrintTo(const NnetCase& c, std::ostream* os) { *os << c.name; }

Tensor labels_for(std::int64_t rows, std::int64_t classes, std::uint64_t seed) {
  std::vector<std::int64_t> labels;
  for (std::int64_t r = 0; r < rows; ++r) {
    labels.push_back(static_cast<std::int64_t>((seed * 7 + static_cast<std::uint64_t>(r) * 5) %
                                               static_cast<std::uint64_t>(classes)));
  }
  return Tensor::from_vector<std::int64_t>({rows}, labels);
}

class NnetOps : public ::testing::TestWithParam<NnetCase> {};

TEST_P(NnetOps, FastKernelsMatchReference) {
  const NnetCase& c = GetParam();
  const double tolerance = c.dtype == DType::Float32 ? 1e-5 : 1e-12;
  Variable x = tensor(c.dtype, c.shape, "x");
  Variable dy = tensor(c.dtype, c.shape, "dy");
  Tensor vx = testing::random_tensor(c.dtype, c.shape, 3, -4.0, 4.0);
  Tensor vdy = testing::random_tensor(c.dtype, c.shape, 4);
  if (c.strided) {
    vx = testing::non_contiguous_copy(vx);
    vdy = testing::non_contiguous_copy(vdy);
  }
  EXPECT_TRUE(testing::fast_matches_reference(
      {x, dy}, {softmax(x), log_softmax(x), softmax_grad(dy, softmax(x))}, {vx, vdy}, tolerance,
      tolerance));
  if (c.shape.rank() != 2) return;
  Variable labels = vector(DType::Int64, "labels");
  const Tensor vlabels = labels_for(c.shape[0], c.shape[1], 1);
  Variable loss = softmax_cross_entropy(x, labels);
  Variable probs_loss = crossentropy_categorical_1hot(softmax(x), labels);
  const Variable cost = sum(loss) + sum(probs_loss);
  EXPECT_TRUE(testing::fast_matches_reference({x, labels}, {loss, probs_loss, grad(cost, {x})[0]},
                                              {vx, vlabels}, tolerance, tolerance));
}

std::vector<NnetCase> nnet_cases() {
  std::vector<NnetCase> cases;
  const std::vector<std::pair<Dims, std::string>> shapes = {
      {{5, 3}, "5x3"},
      {{1, 7}, "batch1"},
      {{4, 1}, "one_class"},
      {{2, 3, 5}, "rank3"},
      {{6}, "vector"},
      // Rows long enough for the vector exp and its tail, and enough of them to run in parallel.
      {{64, 1001}, "long_rows"},
      {{1500, 37}, "many_rows"}};
  for (const auto& [shape, shape_name] : shapes) {
    for (DType dtype : {DType::Float32, DType::Float64}) {
      for (bool strided : {false, true}) {
        cases.push_back({std::string(dtype == DType::Float32 ? "f32_" : "f64_") + shape_name +
                             (strided ? "_strided" : "_contig"),
                         shape, dtype, strided});
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, NnetOps, ::testing::ValuesIn(nnet_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(Softmax, RowsSumToOneAndLogSoftmaxIsStable) {
  Variable x = matrix(DType::Float32, "x");
  const Tensor value = Tensor::from_vector<float>({2, 3}, {1000.0f, 0.0f, -1000.0f, 1.0f, 2.0f, 3.0f});
  const auto out = testing::run_graph({x}, {softmax(x), log_softmax(x)}, {value});
  EXPECT_NEAR(out[0].at(0), 1.0, 1e-6);
  EXPECT_NEAR(out[0].at(3) + out[0].at(4) + out[0].at(5), 1.0, 1e-6);
  EXPECT_NEAR(out[1].at(2), -2000.0, 1e-2);  // log(softmax) would be log(0) = -inf here
  const double log_total = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(out[1].at(3), 1.0 - log_total, 1e-6);
}

TEST(CrossEntropy, IntegerAndOneHotTargetsAgree) {
  Variable logits = matrix(DType::Float64, "logits");
  Variable labels = vector(DType::Int32, "labels");
  Variable onehot = matrix(DType::Float64, "onehot");
  const Tensor vlogits = testing::random_tensor(DType::Float64, {3, 4}, 8, -3.0, 3.0);
  const Tensor vlabels = Tensor::from_vector<std::int32_t>({3}, {2, 0, 3});
  const Tensor vonehot =
      Tensor::from_vector<double>({3, 4}, {0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1});
  const auto out = testing::run_graph(
      {logits, labels, onehot},
      {softmax_cross_entropy(logits, labels), softmax_cross_entropy(logits, onehot),
       categorical_crossentropy(softmax(logits), labels),
       categorical_crossentropy(softmax(logits), onehot), -log_softmax(logits)},
      {vlogits, vlabels, vonehot});
  const std::vector<std::int64_t> picked = {2, 4 + 0, 8 + 3};
  for (std::int64_t r = 0; r < 3; ++r) {
    const double expected = out[4].at(picked[static_cast<std::size_t>(r)]);
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(out[static_cast<std::size_t>(k)].at(r), expected, 1e-12);
  }
}

TEST(CrossEntropy, BinaryMatchesItsDefinition) {
  Variable o = vector(DType::Float64, "o");
  Variable t = vector(DType::Float64, "t");
  const auto out = testing::run_graph({o, t}, {binary_crossentropy(o, t)},
                                      {Tensor::from_vector<double>({2}, {0.25, 0.9}),
                                       Tensor::from_vector<double>({2}, {1.0, 0.3})});
  EXPECT_NEAR(out[0].at(0), -std::log(0.25), 1e-12);
  EXPECT_NEAR(out[0].at(1), -(0.3 * std::log(0.9) + 0.7 * std::log(0.1)), 1e-12);
}

TEST(NnetGradients, MatchFiniteDifferences) {
  const Tensor x = testing::random_tensor(DType::Float64, {3, 4}, 1, -2.0, 2.0);
  const Tensor dy = testing::random_tensor(DType::Float64, {3, 4}, 2);
  const Tensor x3 = testing::random_tensor(DType::Float64, {2, 2, 3}, 3);
  const Tensor labels = Tensor::from_vector<std::int64_t>({3}, {3, 0, 2});
  const Tensor targets = testing::random_tensor(DType::Float64, {3, 4}, 4, 0.0, 1.0);
  const Tensor probs = testing::random_tensor(DType::Float64, {3, 4}, 5, 0.1, 0.9);
  EXPECT_TRUE(testing::gradient_matches_numeric([](const auto& v) { return softmax(v[0]); }, {x}));
  EXPECT_TRUE(testing::gradient_matches_numeric([](const auto& v) { return softmax(v[0]); }, {x3}));
  EXPECT_TRUE(testing::gradient_matches_numeric([](const auto& v) { return log_softmax(v[0]); }, {x}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return softmax_grad(v[0], v[1]); }, {dy, probs}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return softmax_cross_entropy(v[0], v[1]); }, {x, labels}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return softmax_cross_entropy(v[0], v[1]); }, {x, targets}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return crossentropy_categorical_1hot(v[0], v[1]); }, {probs, labels}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return categorical_crossentropy(v[0], v[1]); }, {probs, targets}));
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return binary_crossentropy(v[0], v[1]); }, {probs, targets}));
}

TEST(NnetGradients, SecondOrderThroughSoftmaxGrad) {
  // d/dx of sum(grad(softmax)) exercises SoftmaxGrad's own pullback.
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) {
        Variable y = softmax(v[0]);
        return grad(sum(y * y * y), {v[0]})[0];
      },
      {testing::random_tensor(DType::Float64, {2, 3}, 9)}));
}

TEST(NnetErrors, LabelOutOfRangeNamesTheNode) {
  Variable logits = matrix(DType::Float32, "logits");
  Variable labels = vector(DType::Int64, "labels");
  Function f = function({logits, labels}, {softmax_cross_entropy(logits, labels)});
  try {
    (void)f({Tensor::zeros(DType::Float32, {2, 3}), Tensor::from_vector<std::int64_t>({2}, {1, 3})});
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::IndexOutOfRange);
    EXPECT_NE(std::string(error.what()).find("nnet_test.cpp"), std::string::npos) << error.what();
  }
}

TEST(NnetErrors, RowMismatchIsAShapeError) {
  Variable probs = matrix(DType::Float32, "probs");
  Variable labels = vector(DType::Int64, "labels");
  Function f = function({probs, labels}, {crossentropy_categorical_1hot(probs, labels)});
  try {
    (void)f({Tensor::full(DType::Float32, {2, 3}, 0.5), Tensor::from_vector<std::int64_t>({3}, {0, 1, 2})});
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(error.what()).find("(2, 3)"), std::string::npos) << error.what();
  }
  EXPECT_THROW((void)crossentropy_categorical_1hot(matrix(DType::Float32, "p", {2, 3}),
                                                   vector(DType::Int64, "l", {3})),
               Error);
}

TEST(NnetErrors, WrongDtypesAreTypeErrors) {
  try {
    (void)softmax(matrix(DType::Int32, "i"));
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::TypeMismatch);
  }
  try {
    (void)crossentropy_categorical_1hot(matrix(DType::Float32, "p"), matrix(DType::Int64, "l"));
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::TypeMismatch);
  }
}

TEST(Nnet, ProfileNamesAndCosts) {
  Variable x = matrix(DType::Float32, "x");
  EXPECT_EQ(softmax(x).owner()->op_string(), "Softmax");
  const OpDef& op = op_def("Softmax");
  const std::vector<Dims> shapes = {Dims{4, 10}};
  const std::vector<DType> dtypes = {DType::Float32};
  const Cost cost = op.cost(CostContext{op, shapes, shapes, dtypes, Attrs{}});
  EXPECT_EQ(cost.flops, 5.0 * 40);
  EXPECT_EQ(cost.bytes, 2.0 * 40 * 4);
}

}  // namespace
}  // namespace tscope
