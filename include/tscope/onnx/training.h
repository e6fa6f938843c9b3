// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Training an imported model: a loss on its first output, the gradients of its parameters and
/// SGD-with-momentum updates, ready for function().
///
///   onnx::ImportOptions import_options;
///   import_options.trainable = true;
///   onnx::ImportedModel model = onnx::import_model("mlp.onnx", import_options);
///   onnx::TrainingStep step = onnx::training_step(model, {.learning_rate = 0.01});
///   Function train = function(step.inputs, {step.loss}, step.updates);
///   double loss = train({batch, labels})[0].at(0);  // one step; the weights move
///
/// Backward nodes carry the provenance of the model node they differentiate
/// ("grad(onnx:Gemm 'fc1')"); the loss and the updates carry "onnx training: <loss>" and
/// "onnx training: sgd_momentum".
#include <cstdint>
#include <string_view>
#include <vector>

#include "tscope/core/dims.h"
#include "tscope/core/tensor.h"
#include "tscope/graph/variable.h"
#include "tscope/onnx/import.h"
#include "tscope/runtime/function.h"

#pragma GCC visibility push(default)

namespace tscope::onnx {

enum class TrainingLoss {
  SoftmaxCrossEntropy,  ///< mean softmax cross-entropy of (batch, classes) logits, int64 labels
  MeanSquaredError,     ///< mean of (output - target)^2 over every element
  Mean,                 ///< mean of the output (no target): a smoke test of the backward pass
};

struct TrainingOptions {
  TrainingLoss loss = TrainingLoss::SoftmaxCrossEntropy;
  double learning_rate = 0.01;
  double momentum = 0.9;
};

struct TrainingStep {
  Variable loss;  ///< the float scalar minimised
  /// Labels (int64, (batch,)) or targets (the output's type); undefined for TrainingLoss::Mean.
  Variable target;
  /// The model's inputs, then `target` when it is defined: the inputs of function().
  std::vector<Variable> inputs;
  std::vector<Variable> gradients;  ///< d loss / d parameter, one per model.parameters
  /// Per parameter a velocity v (a shared variable "v_<name>", zero at first) and the updates
  /// v <- momentum v - learning_rate g, then parameter <- parameter + v (PyTorch's SGD with the
  /// velocity scaled by the constant learning rate), then the model's own updates.
  std::vector<Update> updates;
};

/// Builds the loss, gradients and updates of one training step on the model's first output.
/// Throws InvalidArgument when the model was not imported trainable or has no parameters,
/// TypeMismatch when the first output is not float, ShapeMismatch when the cross-entropy's output
/// is not 2-D; each names the output.
[[nodiscard]] TrainingStep training_step(const ImportedModel& model,
                                         const TrainingOptions& options = {});

/// The dims a target must have for these inputs: (batch,) for labels, the output's dims for
/// targets. Dims the types leave unknown are found by running the model's shape computation on
/// `inputs`. Throws InvalidArgument for a step without target.
[[nodiscard]] Dims target_dims(const ImportedModel& model,
                               const TrainingStep& step,
                               const std::vector<Tensor>& inputs);

/// A random target of `dims`: labels uniform in [0, classes) (classes: the output's last extent),
/// or values uniform in [-1, 1) of the output's dtype.
[[nodiscard]] Tensor random_target(const TrainingStep& step,
                                   const ImportedModel& model,
                                   const Dims& dims,
                                   std::uint64_t seed);

/// Checks a target read from `source` against the step: TypeMismatch for labels that are not
/// int64 or targets not of the output's dtype, ShapeMismatch for dims other than `dims`; each
/// names `source` and what was expected.
void check_target(const TrainingStep& step,
                  const Tensor& target,
                  const Dims& dims,
                  std::string_view source);

}  // namespace tscope::onnx

#pragma GCC visibility pop
