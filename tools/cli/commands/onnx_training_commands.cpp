// SPDX-License-Identifier: Apache-2.0
// `tscope profile model.onnx --train` and the options every training command shares: one
// function holds the model's forward pass, the loss, the gradients and the updates
// (docs/onnx.md, "Training an imported model").
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "onnx_model_commands.h"
#include "tscope/onnx/model_inputs.h"
#include "tscope/onnx/trained_model.h"
#include "tscope/onnx/training.h"
#include "tscope/profile/atomic_file.h"
#include "validators.h"

namespace tscope::cli {
namespace {

onnx::TrainingLoss parse_loss(const std::string& name) {
  if (name == "mse") return onnx::TrainingLoss::MeanSquaredError;
  if (name == "mean") return onnx::TrainingLoss::Mean;
  return onnx::TrainingLoss::SoftmaxCrossEntropy;
}

// The labels or targets of every step: drawn once, or read from the --labels file.
Tensor target_tensor(const OnnxTrainSettings& settings,
                     const onnx::ImportedModel& model,
                     const onnx::TrainingStep& step,
                     const std::vector<Tensor>& inputs,
                     std::uint64_t seed) {
  try {
    const Dims dims = onnx::target_dims(model, step, inputs);
    if (settings.labels == "random") return onnx::random_target(step, model, dims, seed + 1);
    const Tensor target = onnx::read_input_file(settings.labels);
    onnx::check_target(step, target, dims, settings.labels);
    return target;
  } catch (Error& error) {
    error.add_context(fmt::format("in --labels {} (--loss {})", settings.labels, settings.loss));
    throw;
  }
}

}  // namespace

void add_onnx_train_options(CLI::App* command, OnnxTrainSettings& settings, bool save_model) {
  CLI::Option* train = command->add_flag(
      "--train", settings.train,
      "an ONNX model: run training steps (forward, loss, gradients of every weight, SGD with "
      "momentum, BatchNormalization running averages) instead of inferences");
  command
      ->add_option("--loss", settings.loss,
                   "xent (softmax cross-entropy of the first output, 2-D, against "
                   "integer class labels), mse (mean squared error against targets of the "
                   "output's shape) or mean (the output's mean, no target)")
      ->check(CLI::IsMember({"xent", "mse", "mean"}))
      ->needs(train);
  command->add_option("--lr", settings.learning_rate, "learning rate")
      ->check(positive())
      ->needs(train);
  command->add_option("--momentum", settings.momentum, "SGD momentum (0: plain SGD)")
      ->check(non_negative())
      ->needs(train);
  command
      ->add_option("--labels", settings.labels,
                   "'random' (labels uniform over the classes, or targets uniform in "
                   "[-1, 1)), or a .npy or .pb file of int64 labels (batch,) for xent or of "
                   "targets of the output's dtype and dims for mse; the same every step")
      ->needs(train);
  if (save_model) {
    command
        ->add_option("--save-model", settings.save_model_path,
                     "write a copy of the model with the trained weights (and running "
                     "averages) to this .onnx file")
        ->needs(train);
  }
}

OnnxTraining compile_onnx_training(const OnnxModelSettings& model_settings,
                                   const OnnxTrainSettings& train,
                                   FunctionOptions options) {
  LoadedOnnxModel loaded = load_onnx_model(model_settings, /*trainable=*/true);
  if (train.loss == "mean" && train.labels != "random") {
    throw_error(ErrorKind::InvalidArgument, "--labels {}: --loss mean compares with no target",
                train.labels);
  }
  onnx::TrainingStep step;
  try {
    step = onnx::training_step(loaded.model, {.loss = parse_loss(train.loss),
                                              .learning_rate = train.learning_rate,
                                              .momentum = train.momentum});
  } catch (Error& error) {
    error.add_context(fmt::format("with --loss {}", train.loss));
    throw;
  }
  std::vector<Tensor> inputs = loaded.inputs;
  if (step.target.defined()) {
    inputs.push_back(target_tensor(train, loaded.model, step, loaded.inputs, model_settings.seed));
  }
  options.name = fmt::format("{} training step ({} nodes, opset {}, --loss {})",
                             std::filesystem::path(loaded.model.source).filename().string(),
                             loaded.model.node_count, loaded.model.opset, train.loss);
  options.channel_block = model_settings.channel_block;
  options.winograd = !model_settings.no_winograd;
  Function function_step = function(step.inputs, {step.loss}, step.updates, std::move(options));
  return {std::move(loaded.model), std::move(function_step), std::move(inputs)};
}

int profile_onnx_training(const OnnxModelSettings& model_settings,
                          const OnnxTrainSettings& train,
                          const OnnxProfileSettings& settings,
                          int steps,
                          profile::TextReportOptions report) {
  if (!train.save_model_path.empty()) profile::check_output_path(train.save_model_path);
  FunctionOptions options;
  options.profile = true;
  OnnxTraining training = compile_onnx_training(model_settings, train, options);
  // Each warm-up step trains too; at least one step is timed.
  const int warmup = std::min(settings.warmup, steps - 1);
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    if (i == warmup) training.step.reset_profile_timings();
    losses.push_back(training.step(training.inputs)[0].at(0));
  }
  profile::Profile profile = training.step.collector()->snapshot();
  print_and_write_profile(profile, settings, report);
  if (!train.save_model_path.empty()) {
    onnx::write_trained_model(training.model, train.save_model_path);
  }
  const double per_step_ms = profile.functions.empty() || profile.functions.front().call_count == 0
                                 ? 0.0
                                 : static_cast<double>(profile.functions.front().call_ns) * 1e-6 /
                                       static_cast<double>(profile.functions.front().call_count);
  std::cout << fmt::format("Training loss: first step {:.4f}, last step {:.4f} ({} steps)\n",
                           losses.front(), losses.back(), losses.size());
  std::cout << fmt::format("Training step: {:.3f} ms per call over {} calls ({} warm-up)\n",
                           per_step_ms, steps - warmup, warmup);
  if (!train.save_model_path.empty()) {
    std::cout << fmt::format("Trained model written to {}\n", train.save_model_path);
  }
  return 0;
}

}  // namespace tscope::cli
