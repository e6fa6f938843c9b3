// SPDX-License-Identifier: Apache-2.0
#include "tscope/models/ntm_training.h"

#include <cmath>
#include <random>
#include <string>

#include "training_common.h"
#include "tscope/grad/grad.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/shape.h"
#include "tscope/runtime/scan.h"

namespace tscope::models {
namespace {
using detail::random_normal;

// Copy-task batch: inputs (T, batch, bits) hold random bits in the first half and zeros after;
// targets (T, batch, bits) hold zeros in the first half and the input bits after.
struct CopyTask {
  Tensor inputs;
  Tensor targets;
};

CopyTask copy_task(const NtmTrainingConfig& config, std::mt19937_64& rng) {
  const std::int64_t length = config.sequence_length;
  const std::int64_t half = length / 2;
  const std::int64_t row = config.batch_size * config.bits;
  std::bernoulli_distribution bit(0.5);
  std::vector<double> inputs(static_cast<std::size_t>(length * row), 0.0);
  std::vector<double> targets(static_cast<std::size_t>(length * row), 0.0);
  for (std::int64_t t = 0; t < half; ++t) {
    for (std::int64_t k = 0; k < row; ++k) {
      const double value = bit(rng) ? 1.0 : 0.0;
      inputs[static_cast<std::size_t>(t * row + k)] = value;
      targets[static_cast<std::size_t>((t + length - half) * row + k)] = value;
    }
  }
  const Dims shape{length, config.batch_size, config.bits};
  return {Tensor::from_doubles(config.dtype, shape, inputs),
          Tensor::from_doubles(config.dtype, shape, targets)};
}

// The model's weights, shared variables named as in a write-up of the network.
struct Weights {
  Variable gates_x, gates_h, gates_b;  // controller: [x, read] -> 4 gates
  Variable key, strength, erase, add;  // head
  Variable out_h, out_b;               // output layer: [h, read] -> bits
  [[nodiscard]] std::vector<Variable> all() const {
    return {gates_x, gates_h, gates_b, key, strength, erase, add, out_h, out_b};
  }
};

Weights make_weights(const NtmTrainingConfig& config, std::mt19937_64& rng) {
  const DType dtype = config.dtype;
  const std::int64_t in = config.bits + config.memory_width;
  const std::int64_t hidden = config.controller;
  const std::int64_t width = config.memory_width;
  auto weight = [&](std::int64_t rows, std::int64_t columns, const std::string& name) {
    return shared(
        random_normal(dtype, {rows, columns}, 1.0 / std::sqrt(static_cast<double>(rows)), rng),
        name);
  };
  auto bias = [&](std::int64_t size, const std::string& name) {
    return shared(Tensor::zeros(dtype, {size}), name);
  };
  return {weight(in, 4 * hidden, "W_gates_x"),
          weight(hidden, 4 * hidden, "W_gates_h"),
          bias(4 * hidden, "b_gates"),
          weight(hidden, width, "W_key"),
          shared(random_normal(dtype, {hidden}, 1.0 / std::sqrt(static_cast<double>(hidden)), rng),
                 "w_strength"),
          weight(hidden, width, "W_erase"),
          weight(hidden, width, "W_add"),
          weight(hidden + width, config.bits, "W_out"),
          bias(config.bits, "b_out")};
}

// Columns [k * size, (k + 1) * size) of a (batch, 4 * size) matrix.
Variable gate(const Variable& gates, std::int64_t k, std::int64_t size) {
  return subtensor(gates, {slice(), slice(k * size, (k + 1) * size)});
}

// One time step. in: x[t] (batch, bits), h, c (batch, hidden), memory (batch, N, M),
// read (batch, M); returns the new h, c, memory, read and the output logits (batch, bits).
std::vector<Variable> ntm_step(const std::vector<Variable>& in,
                               const Weights& w,
                               std::int64_t hidden) {
  const Variable& x = in[0];
  const Variable& h_prev = in[1];
  const Variable& c_prev = in[2];
  const Variable& memory = in[3];
  const Variable& read_prev = in[4];
  // Controller: an LSTM cell on the input and the previous read.
  const Variable gates =
      dot(join(1, {x, read_prev}), w.gates_x) + dot(h_prev, w.gates_h) + w.gates_b;
  const Variable c = sigmoid(gate(gates, 1, hidden)) * c_prev +
                     sigmoid(gate(gates, 0, hidden)) * tanh(gate(gates, 2, hidden));
  const Variable h = sigmoid(gate(gates, 3, hidden)) * tanh(c);
  // Head: content addressing by cosine similarity, sharpened by a learnt strength.
  const Variable key = tanh(dot(h, w.key));  // (batch, M)
  const Variable strength =
      dimshuffle(softplus(dot(h, w.strength)) + 1.0, {0, kNewAxis});           // (batch, 1)
  const Variable dots = sum(memory * dimshuffle(key, {0, kNewAxis, 1}), {2});  // (batch, N)
  const Variable norms =
      sqrt(sum(sqr(memory), {2}) * dimshuffle(sum(sqr(key), {1}), {0, kNewAxis}) + 1e-6);
  const Variable weights = softmax(strength * (dots / norms));    // (batch, N)
  const Variable column = dimshuffle(weights, {0, 1, kNewAxis});  // (batch, N, 1)
  const Variable read = sum(memory * column, {1});                // (batch, M)
  // Write: erase, then add, where the head points.
  const Variable erase = dimshuffle(sigmoid(dot(h, w.erase)), {0, kNewAxis, 1});
  const Variable add_vector = dimshuffle(tanh(dot(h, w.add)), {0, kNewAxis, 1});
  const Variable written = memory * (1.0 - column * erase) + column * add_vector;
  const Variable logits = dot(join(1, {h, read}), w.out_h) + w.out_b;
  return {h, c, written, read, logits};
}

}  // namespace

TrainingRun train_ntm(const NtmTrainingConfig& config) {
  if (config.sequence_length < 2) {
    throw_error(ErrorKind::InvalidArgument,
                "the NTM copy task needs a sequence length of at least 2, not {}",
                config.sequence_length);
  }
  std::mt19937_64 rng(config.seed);
  const DType dtype = config.dtype;
  const Weights w = make_weights(config, rng);
  Variable x = tensor(dtype, {kUnknownDim, kUnknownDim, config.bits}, "x");
  Variable target = tensor(dtype, {kUnknownDim, kUnknownDim, config.bits}, "target");
  const Variable batch = shape_i(x, 1);
  const Variable h0 = zeros({batch, config.controller}, dtype);
  const Variable c0 = zeros({batch, config.controller}, dtype);
  // A small constant memory, so the first cosine similarities are defined.
  const Variable memory0 = alloc(constant(Tensor::scalar(1e-2, dtype)),
                                 {batch, config.memory_slots, config.memory_width});
  const Variable read0 = zeros({batch, config.memory_width}, dtype);
  ScanResult loop =
      scan([&](const std::vector<Variable>& in) { return ntm_step(in, w, config.controller); }, {x},
           {h0, c0, memory0, read0, ScanOutput::none()}, {}, {.name = "ntm_step"});
  const Variable output = sigmoid(loop.outputs[4]);
  const Variable loss = mean(binary_crossentropy(clip(output, 1e-6, 1.0 - 1e-6), target));

  const std::vector<Variable> params = w.all();
  const std::vector<Variable> grads = grad(loss, params);
  const std::vector<Update> updates =
      detail::sgd_momentum_updates(params, grads, config.learning_rate, config.momentum);
  FunctionOptions options = config.options;
  if (options.name.empty()) options.name = "ntm_training (built-in)";
  TrainingRun run;
  run.train = function({x, target}, {loss}, updates, options);
  const CopyTask task = copy_task(config, rng);
  for (int step = 0; step < config.steps; ++step) {
    run.losses.push_back((*run.train)({task.inputs, task.targets})[0].at(0));
  }
  return run;
}

}  // namespace tscope::models
