// SPDX-License-Identifier: Apache-2.0
// Logistic regression, the classic first Theano program, in Tensorscope: 400 samples of 784
// features with labels from a hidden linear rule, trained by gradient descent on the
// cross-entropy plus weight decay. Prints one "step <i> loss <value>" line per step.
//
//   tscope_example_logistic_regression [steps]
#include <cstdio>
#include <cstdlib>

#include "tscope/tscope.h"

int main(int argc, char** argv) {
  using namespace tscope;
  const int steps = argc > 1 ? std::atoi(argv[1]) : 100;
  const std::int64_t samples = 400;
  const std::int64_t features = 784;

  // Synthetic data drawn by a compiled function from a seeded stream: inputs ~ N(0, 1) and labels
  // 1 where the input lies on the positive side of a random hyperplane.
  RandomStream data_rng(2024);
  Variable data_x = data_rng.normal(0.0, 1.0, {samples, features});
  Variable hyperplane = data_rng.normal(0.0, 1.0, {features});
  Variable data_y = cast(ge(dot(data_x, hyperplane), 0.0), DType::Float64);
  const std::vector<Tensor> data = function({}, {data_x, data_y})({});

  Variable x = matrix(DType::Float64, "x");
  Variable y = vector(DType::Float64, "y");
  Variable w = shared(Tensor::zeros(DType::Float64, {features}), "w");
  Variable b = shared(Tensor::scalar(0.0, DType::Float64), "b");

  Variable p_1 = sigmoid(dot(x, w) + b);                  // probability that the label is 1
  Variable xent = binary_crossentropy(p_1, y);            // cross-entropy per sample
  Variable cost = mean(xent) + 0.001 * sum(sqr(w));       // the cost to minimise
  const std::vector<Variable> grads = grad(cost, {w, b});
  const double learning_rate = 0.05;
  Function train = function({x, y}, {cost},
                            {{w, w - learning_rate * grads[0]}, {b, b - learning_rate * grads[1]}});

  for (int step = 0; step < steps; ++step) {
    const double loss = train(data)[0].at(0);
    std::printf("step %d loss %.6f\n", step, loss);
  }
  return 0;
}
