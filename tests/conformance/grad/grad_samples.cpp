// SPDX-License-Identifier: Apache-2.0
// One row per small graph; a row may reach several ops. Rows whose output is itself a gradient
// (grad() inside the builder) reach the pullbacks of gradient ops, such as MeanGrad's.
#include "grad_samples.h"

namespace tscope::testing {
namespace {

Variable first_gradient(const Variable& cost, const Variable& wrt) { return grad(cost, {wrt})[0]; }

Variable int_vector(const std::vector<std::int64_t>& values) {
  return constant(
      Tensor::from_vector<std::int64_t>({static_cast<std::int64_t>(values.size())}, values));
}

}  // namespace

const std::vector<GradSample>& grad_samples() {
  static const std::vector<GradSample> samples = {
      // Reductions. Random points have distinct values, so max and min are differentiable there.
      {"Reductions",
       {{2, 3, 4}},
       [](const auto& v) {
         return sum(v[0], {2}) + mean(v[0], {2}) + prod(v[0], {2}) + max(v[0], {2}) +
                min(v[0], {2});
       },
       0.5,
       1.5},
      // d/dg of MeanGrad(x, g): MeanGrad's own pullback, which only a second derivative reaches.
      {"MeanGrad",
       {{2, 3}, {2}},
       [](const auto& v) { return first_gradient(sum(mean(v[0], {1}) * v[1]), v[0]); }},
      // Shapes and views.
      {"ReshapeFlattenDimShuffle",
       {{2, 3}},
       [](const auto& v) {
         return flatten(transpose(reshape(v[0], {3, 2}))) * 2.0;
       }},
      {"JoinSplit",
       {{2, 3}},
       [](const auto& v) {
         const std::vector<Variable> parts = split(v[0], 1, {1, 2});
         return join(1, {parts[1], parts[0] * 3.0});
       }},
      {"MakeVectorAlloc",
       {{2, 3}},
       [](const auto& v) {
         const Variable pair = make_vector({sum(v[0]), max(v[0])});
         return alloc(sum(v[0] * v[0]), {DimArg(2), DimArg(2)}) + pair;
       }},
      // ARange's float gradient: start shifts every value and step scales each by its index. The
      // length, ceil((4 - start) / step), is constant near a random point.
      {"ARange",
       {{}, {}},
       [](const auto& v) {
         return sqr(arange(v[0], constant(Tensor::scalar(4.0, DType::Float64)), v[1]));
       },
       0.5,
       1.0},
      // Linear algebra: each product op through its own builder.
      {"DotDot22Gemm",
       {{2, 3}, {3, 4}, {2, 4}},
       [](const auto& v) {
         return dot(v[0], v[1]) + dot22(v[0], v[1]) + gemm(v[2], v[0], v[1], 0.5, 2.0);
       }},
      {"GemvGer",
       {{2, 3}, {2}, {3}},
       [](const auto& v) {
         return ger(v[0], v[1], v[2], 0.5) + dimshuffle(gemv(v[1], v[0], v[2], 2.0, 0.5), {0, -1});
       }},
      {"BatchedDot", {{2, 3, 4}, {2, 4, 2}}, [](const auto& v) { return batched_dot(v[0], v[1]); }},
      // Neural-network ops.
      {"SoftmaxLogSoftmax",
       {{2, 3}},
       [](const auto& v) { return softmax(v[0]) + log_softmax(v[0]); }},
      {"SoftmaxGrad",
       {{2, 3}, {2, 3}},
       [](const auto& v) { return first_gradient(sum(softmax(v[0]) * v[1]), v[0]); }},
      {"LayerNorm",
       {{2, 3, 4}, {3, 4}, {4}},
       [](const auto& v) { return layer_norm(v[0], v[1], v[2], {.axis = 1}); }},
      {"CrossentropyCategorical1Hot",
       {{2, 3}},
       [](const auto& v) {
         return crossentropy_categorical_1hot(softmax(v[0]), int_vector({2, 0}));
       }},
      {"CrossentropySoftmax1Hot",
       {{2, 3}},
       [](const auto& v) {
         return softmax_cross_entropy(v[0], int_vector({1, 2}));
       }},
      {"SubtensorIncSubtensor",
       {{4, 3}, {2, 3}},
       [](const auto& v) {
         return inc_subtensor(v[0], {slice(1, 3)}, v[1]) + subtensor(v[0], {slice(none, none, -1)});
       }},
      {"AdvancedSubtensor1",
       {{4, 3}, {3, 3}},
       [](const auto& v) {
         const Variable rows = int_vector({3, 0, 3});
         return advanced_inc_subtensor1(v[0], rows, v[1]) +
                join(0, {advanced_subtensor1(v[0], rows), subtensor(v[0], {slice(0, 1)})});
       }},
      {"AdvancedSubtensor",
       {{4, 3}, {2}},
       [](const auto& v) {
         const IndexList indices = {Index(int_vector({1, 3})), Index(int_vector({2, 0}))};
         return sum(advanced_inc_subtensor(v[0], indices, v[1])) +
                advanced_subtensor(v[0], indices);
       }},
      // Convolutions and pooling; the gradient ops through first derivatives of the forward ones.
      {"ConvConvTranspose",
       {{1, 2, 4, 4}, {3, 2, 2, 2}, {1, 3, 3, 3}, {3, 2, 2, 2}},
       [](const auto& v) {
         return conv2d(v[0], v[1]) + conv2d(conv_transpose2d(v[2], v[3]), v[1]);
       }},
      {"ConvGradInputs",
       {{1, 2, 4, 4}, {3, 2, 2, 2}, {1, 3, 3, 3}},
       [](const auto& v) { return first_gradient(sum(conv2d(v[0], v[1]) * v[2]), v[0]); }},
      {"ConvGradWeights",
       {{1, 2, 4, 4}, {3, 2, 2, 2}, {1, 3, 3, 3}},
       [](const auto& v) { return first_gradient(sum(conv2d(v[0], v[1]) * v[2]), v[1]); }},
      {"Pooling",
       {{1, 2, 4, 4}},
       [](const auto& v) {
         const PoolOptions pool{.kernel = {2, 2}};
         return max_pool2d(v[0], pool) + avg_pool2d(v[0], pool);
       }},
      {"PoolGrads",
       {{1, 2, 4, 4}, {1, 2, 2, 2}},
       [](const auto& v) {
         const PoolOptions pool{.kernel = {2, 2}};
         return first_gradient(sum(max_pool2d(v[0], pool) * v[1]), v[0]) +
                first_gradient(sum(avg_pool2d(v[0], pool) * v[1]), v[0]);
       }},
      // MaxPoolGradGrad appears in the gradient of MaxPoolGrad with respect to its dy.
      {"MaxPoolGradGrad",
       {{1, 2, 4, 4}, {1, 2, 2, 2}, {1, 2, 4, 4}},
       [](const auto& v) {
         const PoolOptions pool{.kernel = {2, 2}};
         const Variable dx = first_gradient(sum(max_pool2d(v[0], pool) * v[1]), v[0]);
         return first_gradient(sum(dx * v[2]), v[1]);
       }},
      {"BatchNorm",
       {{2, 3, 2, 2}, {3}, {3}, {3}, {3}},
       [](const auto& v) {
         const BatchNormTraining train = batch_norm_train(v[0], v[1], v[2], v[3], v[4]);
         return train.y + batch_norm_inference(v[0], v[1], v[2], v[3], v[4] * v[4] + 1.0);
       }},
      // Recurrent layers: 2 steps, batch 1, input 2, hidden 2.
      {"Recurrent",
       {{2, 1, 2}, {2, 2}, {2, 2}, {6, 2}, {6, 2}, {8, 2}, {8, 2}},
       [](const auto& v) {
         return rnn(v[0], v[1], v[2]).y + gru(v[0], v[3], v[4]).y + lstm(v[0], v[5], v[6]).y;
       }},
      // A loop: 3 steps over a (3, 2) sequence, state (2,), weights (2,) read from outside.
      {"Scan",
       {{3, 2}, {2}, {2}},
       [](const auto& v) {
         const Variable& w = v[2];
         return scan(
                    [&](const std::vector<Variable>& step) {
                      return std::vector<Variable>{tanh(step[0] * w + step[1])};
                    },
                    {v[0]}, {v[1]})
             .outputs[0];
       }},
  };
  return samples;
}

}  // namespace tscope::testing
