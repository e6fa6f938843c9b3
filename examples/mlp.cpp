// SPDX-License-Identifier: Apache-2.0
// A 784-512-512-10 multilayer perceptron with relu, softmax cross-entropy on integer labels and
// SGD with momentum, trained on synthetic data (labels from a random linear teacher, so the task
// is learnable). Prints one "step <i> loss <value>" line per step.
//
//   tscope_example_mlp [steps]
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tscope/tscope.h"

namespace {
using namespace tscope;

// Class of each row: the argmax of the row's scores under `teacher` (features x classes).
Tensor teacher_labels(const Tensor& inputs, const Tensor& teacher) {
  const std::int64_t rows = inputs.shape()[0];
  const std::int64_t features = inputs.shape()[1];
  const std::int64_t classes = teacher.shape()[1];
  std::vector<std::int64_t> labels(static_cast<std::size_t>(rows), 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    double best = -1e300;
    for (std::int64_t c = 0; c < classes; ++c) {
      double score = 0;
      for (std::int64_t f = 0; f < features; ++f) {
        score += inputs.at(r * features + f) * teacher.at(f * classes + c);
      }
      if (score > best) {
        best = score;
        labels[static_cast<std::size_t>(r)] = c;
      }
    }
  }
  return Tensor::from_vector<std::int64_t>({rows}, labels);
}
}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 40;
  const std::vector<std::int64_t> sizes = {784, 512, 512, 10};
  const std::int64_t batch = 128;
  const double learning_rate = 0.05;
  const double momentum = 0.9;

  // Data and initial weights (He initialisation) from one seeded stream.
  RandomStream rng(7);
  std::vector<Variable> draws = {rng.normal(0.0, 1.0, {batch, sizes[0]}, DType::Float32),
                                 rng.normal(0.0, 1.0, {sizes[0], sizes[3]}, DType::Float32)};
  for (std::size_t layer = 0; layer + 1 < sizes.size(); ++layer) {
    const double scale = std::sqrt(2.0 / static_cast<double>(sizes[layer]));
    draws.push_back(rng.normal(0.0, scale, {sizes[layer], sizes[layer + 1]}, DType::Float32));
  }
  const std::vector<Tensor> drawn = function({}, draws)({});
  const Tensor inputs = drawn[0];
  const Tensor labels = teacher_labels(inputs, drawn[1]);

  Variable x = matrix(DType::Float32, "x", {kUnknownDim, sizes[0]});
  Variable y = vector(DType::Int64, "y");
  std::vector<Variable> params;
  Variable h = x;
  for (std::size_t layer = 0; layer + 1 < sizes.size(); ++layer) {
    Variable w = shared(drawn[2 + layer], "W" + std::to_string(layer));
    Variable b = shared(Tensor::zeros(DType::Float32, {sizes[layer + 1]}), "b" + std::to_string(layer));
    params.push_back(w);
    params.push_back(b);
    h = dot(h, w) + b;                               // Gemm after rewriting
    if (layer + 2 < sizes.size()) h = relu(h);
  }
  Variable loss = mean(softmax_cross_entropy(h, y));
  const std::vector<Variable> grads = grad(loss, params);

  std::vector<Update> updates;
  for (std::size_t i = 0; i < params.size(); ++i) {
    Variable velocity =
        shared(Tensor::zeros(DType::Float32, params[i].get_value().shape()), "v_" + params[i].name());
    Variable new_velocity = momentum * velocity - learning_rate * grads[i];
    updates.push_back({velocity, new_velocity});
    updates.push_back({params[i], params[i] + new_velocity});
  }
  Function train = function({x, y}, {loss}, updates);

  for (int step = 0; step < steps; ++step) {
    const double value = train({inputs, labels})[0].at(0);
    std::printf("step %d loss %.6f\n", step, value);
  }
  return 0;
}
