// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The built-in training job of `tscope profile`: an MLP (784-512-512-10 by default, relu,
/// softmax cross-entropy on integer labels, SGD with momentum) trained on synthetic data whose
/// labels come from a random linear teacher, so the loss really falls.
#include <cstdint>
#include <optional>
#include <vector>

#include "tscope/runtime/function.h"

#pragma GCC visibility push(default)

namespace tscope::models {

struct MlpTrainingConfig {
  std::vector<std::int64_t> layer_sizes = {784, 512, 512, 10};
  std::int64_t batch_size = 64;
  int steps = 20;
  double learning_rate = 0.05;
  double momentum = 0.9;
  std::uint64_t seed = 42;
  DType dtype = DType::Float32;
  FunctionOptions options;
};

struct TrainingRun {
  std::vector<double> losses;  ///< one per step
  std::optional<Function> train;
};

/// Builds the graph, compiles the training function (with options) and runs `steps` steps.
[[nodiscard]] TrainingRun train_mlp(const MlpTrainingConfig& config);

}  // namespace tscope::models

#pragma GCC visibility pop
