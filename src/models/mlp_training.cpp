// SPDX-License-Identifier: Apache-2.0
#include "tscope/models/mlp_training.h"

#include <cmath>
#include <random>

#include "training_common.h"
#include "tscope/grad/grad.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/reduce.h"

namespace tscope::models {
namespace {
using detail::random_normal;
// Class labels (int64) from a fixed random linear teacher: learnable, so the loss can fall.
Tensor teacher_labels(const Tensor& inputs, std::int64_t classes, std::mt19937_64& rng) {
  const std::int64_t rows = inputs.shape()[0];
  const std::int64_t features = inputs.shape()[1];
  const Tensor teacher = random_normal(DType::Float64, {features, classes}, 1.0, rng);
  const std::vector<double> x = inputs.to_doubles();
  const std::vector<double> w = teacher.to_doubles();
  std::vector<std::int64_t> labels(static_cast<std::size_t>(rows), 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    double best_score = -1e300;
    for (std::int64_t c = 0; c < classes; ++c) {
      double score = 0;
      for (std::int64_t f = 0; f < features; ++f) {
        score += x[static_cast<std::size_t>(r * features + f)] * w[static_cast<std::size_t>(f * classes + c)];
      }
      if (score > best_score) {
        best_score = score;
        labels[static_cast<std::size_t>(r)] = c;
      }
    }
  }
  return Tensor::from_vector<std::int64_t>({rows}, labels);
}
}  // namespace

TrainingRun train_mlp(const MlpTrainingConfig& config) {
  if (config.layer_sizes.size() < 2) {
    throw_error(ErrorKind::InvalidArgument, "an MLP needs at least an input and an output size");
  }
  std::mt19937_64 rng(config.seed);
  const DType dtype = config.dtype;
  const std::int64_t classes = config.layer_sizes.back();

  Variable x = matrix(dtype, "x", {kUnknownDim, config.layer_sizes.front()});
  Variable y = vector(DType::Int64, "y");
  std::vector<Variable> params;
  std::vector<Variable> velocities;
  Variable h = x;
  for (std::size_t layer = 0; layer + 1 < config.layer_sizes.size(); ++layer) {
    const std::int64_t fan_in = config.layer_sizes[layer];
    const std::int64_t fan_out = config.layer_sizes[layer + 1];
    const double scale = std::sqrt(2.0 / static_cast<double>(fan_in));
    Variable w = shared(random_normal(dtype, {fan_in, fan_out}, scale, rng), "W" + std::to_string(layer));
    Variable b = shared(Tensor::zeros(dtype, {fan_out}), "b" + std::to_string(layer));
    params.push_back(w);
    params.push_back(b);
    h = dot(h, w) + b;
    if (layer + 2 < config.layer_sizes.size()) h = relu(h);
  }
  // One stable op for softmax + cross-entropy on integer labels (gradient softmax - onehot).
  Variable loss = mean(softmax_cross_entropy(h, y));
  std::vector<Variable> grads = grad(loss, params);
  const std::vector<Update> updates =
      detail::sgd_momentum_updates(params, grads, config.learning_rate, config.momentum);
  FunctionOptions options = config.options;
  if (options.name.empty()) options.name = "mlp_training (built-in)";
  TrainingRun run;
  run.train = function({x, y}, {loss}, updates, options);

  const Tensor inputs = random_normal(dtype, {config.batch_size, config.layer_sizes.front()}, 1.0, rng);
  const Tensor labels = teacher_labels(inputs, classes, rng);
  for (int step = 0; step < config.steps; ++step) {
    run.losses.push_back((*run.train)({inputs, labels})[0].at(0));
  }
  return run;
}

}  // namespace tscope::models
