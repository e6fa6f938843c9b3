// SPDX-License-Identifier: Apache-2.0
// The training step of an imported model: loss on the first output, grad() of the parameters,
// SGD with momentum; and the targets (labels or values) its loss compares with.
#include "tscope/onnx/training.h"

#include <fmt/format.h>

#include <random>
#include <string>

#include "tscope/grad/grad.h"
#include "tscope/graph/constructors.h"
#include "tscope/graph/provenance.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/shape.h"

namespace tscope::onnx {
namespace {

std::string_view loss_name(TrainingLoss loss) {
  switch (loss) {
    case TrainingLoss::SoftmaxCrossEntropy:
      return "softmax cross-entropy";
    case TrainingLoss::MeanSquaredError:
      return "mean squared error";
    case TrainingLoss::Mean:
      break;
  }
  return "mean";
}

const NamedVariable& first_output(const ImportedModel& model) {
  if (model.outputs.empty()) {
    throw_error(ErrorKind::InvalidArgument, "the model has no output to train");
  }
  const NamedVariable& output = model.outputs.front();
  if (!is_floating(output.variable.dtype())) {
    throw_error(ErrorKind::TypeMismatch, "the loss needs a float first output; output '{}' is {}",
                output.name, output.variable.type().to_string());
  }
  return output;
}

// The loss and, when it compares with one, its target input.
std::pair<Variable, Variable> build_loss(const NamedVariable& output, TrainingLoss loss) {
  const Variable& y = output.variable;
  switch (loss) {
    case TrainingLoss::SoftmaxCrossEntropy: {
      if (y.rank() != 2) {
        throw_error(ErrorKind::ShapeMismatch,
                    "softmax cross-entropy needs a 2-D (batch, classes) first output; output "
                    "'{}' is {}",
                    output.name, y.type().to_string());
      }
      Variable labels = tensor(DType::Int64, Dims{y.type().dims[0]}, "labels");
      return {mean(softmax_cross_entropy(y, labels)), labels};
    }
    case TrainingLoss::MeanSquaredError: {
      Variable targets = tensor(y.dtype(), y.type().dims, "targets");
      return {mean(sqr(y - targets)), targets};
    }
    case TrainingLoss::Mean:
      break;
  }
  return {mean(y), Variable()};
}

}  // namespace

TrainingStep training_step(const ImportedModel& model, const TrainingOptions& options) {
  if (model.parameters.empty()) {
    throw_error(ErrorKind::InvalidArgument,
                "{}: no trainable parameters (import with ImportOptions::trainable; parameters "
                "are float initializers of rank >= 1 that the outputs depend on)",
                model.source);
  }
  const NamedVariable& output = first_output(model);
  TrainingStep step;
  {
    const ProvenanceScope scope(fmt::format("onnx training: {}", loss_name(options.loss)),
                                std::source_location::current());
    std::tie(step.loss, step.target) = build_loss(output, options.loss);
  }
  step.inputs = model.input_variables();
  if (step.target.defined()) step.inputs.push_back(step.target);
  std::vector<Variable> parameters;
  for (const NamedVariable& parameter : model.parameters) parameters.push_back(parameter.variable);
  // A parameter only a later output reads has no gradient from the first output's loss: zero.
  step.gradients = grad(step.loss, parameters, {.disconnected = DisconnectedPolicy::Zero});
  const ProvenanceScope scope("onnx training: sgd_momentum", std::source_location::current());
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const Variable& parameter = parameters[i];
    Variable velocity = shared_fixed_shape(
        Tensor::zeros(parameter.dtype(), parameter.get_value().shape()), "v_" + parameter.name());
    Variable new_velocity = options.momentum * velocity - options.learning_rate * step.gradients[i];
    step.updates.push_back({velocity, new_velocity});
    step.updates.push_back({parameter, parameter + new_velocity});
  }
  step.updates.insert(step.updates.end(), model.updates.begin(), model.updates.end());
  return step;
}

Dims target_dims(const ImportedModel& model,
                 const TrainingStep& step,
                 const std::vector<Tensor>& inputs) {
  if (!step.target.defined()) {
    throw_error(ErrorKind::InvalidArgument, "the loss compares with no target");
  }
  const Variable& y = first_output(model).variable;
  const bool labels = step.target.dtype() == DType::Int64;
  Dims dims = y.type().dims;
  if (!y.type().is_fully_known()) {
    Function shape_of = function(model.input_variables(), {shape(y)}, {},
                                 {.name = "onnx training: output shape", .profile = false});
    const Tensor extents = shape_of(inputs)[0];
    dims = Dims();
    for (std::int64_t axis = 0; axis < extents.numel(); ++axis) {
      dims.push_back(static_cast<std::int64_t>(extents.at(axis)));
    }
  }
  return labels ? Dims{dims[0]} : dims;
}

Tensor random_target(const TrainingStep& step,
                     const ImportedModel& model,
                     const Dims& dims,
                     std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::vector<double> values(static_cast<std::size_t>(dims.product()));
  if (step.target.dtype() == DType::Int64) {
    const std::int64_t classes = first_output(model).variable.type().dims[1];
    if (classes <= 0) {
      throw_error(ErrorKind::InvalidArgument,
                  "random labels need the number of classes; output '{}' is {}",
                  model.outputs.front().name, model.outputs.front().variable.type().to_string());
    }
    std::uniform_int_distribution<std::int64_t> label(0, classes - 1);
    for (double& value : values) value = static_cast<double>(label(generator));
  } else {
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (double& value : values) value = uniform(generator);
  }
  return Tensor::from_doubles(step.target.dtype(), dims, values);
}

void check_target(const TrainingStep& step,
                  const Tensor& target,
                  const Dims& dims,
                  std::string_view source) {
  const bool labels = step.target.dtype() == DType::Int64;
  if (target.dtype() != step.target.dtype()) {
    throw_error(ErrorKind::TypeMismatch, "'{}' holds {} {}; the loss needs {} {} of dims {}",
                source, dtype_name(target.dtype()), target.shape().to_string(),
                labels ? "class labels," : "targets,", dtype_name(step.target.dtype()),
                dims.to_string());
  }
  if (target.shape() != dims) {
    throw_error(ErrorKind::ShapeMismatch, "'{}' has dims {}; the loss needs {} of dims {}", source,
                target.shape().to_string(), labels ? "class labels" : "targets", dims.to_string());
  }
}

}  // namespace tscope::onnx
