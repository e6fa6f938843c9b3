// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The `tscope profile --model ntm` job: a small Neural-Turing-Machine-like network on the copy
/// task, after the second seed (a Theano NTM whose scan took 99% of the training time). A loop
/// (scan) runs one step per time step: an LSTM-cell controller written with dot and elementwise
/// ops (not the dedicated Lstm op), one content-addressed head that reads from and writes to an
/// N x M memory (cosine similarity, sharpened softmax weights, erase and add), and an output layer.
/// The task: a sequence of random bit vectors, then as many blank steps during which the network
/// must reproduce the sequence; the loss is the binary cross-entropy of the reproduction. Training
/// takes the gradient through the loop (a second loop, grad_of_ntm_step) and applies SGD with
/// momentum.
#include <cstdint>

#include "tscope/models/mlp_training.h"

#pragma GCC visibility push(default)

namespace tscope::models {

struct NtmTrainingConfig {
  std::int64_t bits = 8;              ///< width of one input vector
  std::int64_t sequence_length = 20;  ///< steps of the whole task: half input, half recall
  std::int64_t memory_slots = 32;     ///< N
  std::int64_t memory_width = 16;     ///< M
  std::int64_t controller = 64;       ///< hidden units of the LSTM controller
  std::int64_t batch_size = 16;
  int steps = 10;
  double learning_rate = 0.05;
  double momentum = 0.9;
  std::uint64_t seed = 42;
  DType dtype = DType::Float32;
  FunctionOptions options;
};

/// Builds the graph, compiles the training function (with options) and runs `steps` steps on one
/// fixed batch of copy-task sequences. Throws InvalidArgument for a sequence length below 2.
[[nodiscard]] TrainingRun train_ntm(const NtmTrainingConfig& config);

}  // namespace tscope::models

#pragma GCC visibility pop
