// SPDX-License-Identifier: Apache-2.0
#pragma once
// Options shared by the commands that run an ONNX model (`tscope run`, `tscope profile
// model.onnx`): input dims, input data files, the random seed and BLAS threads.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "tscope/onnx/import.h"
#include "tscope/profile/profile.h"
#include "tscope/profile/report_text.h"
#include "tscope/runtime/function.h"

namespace tscope::cli {

struct OnnxModelSettings {
  std::string model_path;
  std::vector<std::string> input_dims;  ///< NAME=D1xD2...
  std::vector<std::string> input_data;  ///< NAME=FILE (.pb or .npy)
  int threads = 0;                      ///< 0: the BLAS library's default
  std::int64_t channel_block = 0;       ///< FunctionOptions::channel_block (0: chosen by CPU)
  bool no_winograd = false;             ///< FunctionOptions::winograd = !no_winograd
  unsigned long long seed = 0;
};

/// Adds --input, --input-data, --threads, --seed and --channel-block to `command`.
void add_onnx_model_options(CLI::App* command, OnnxModelSettings& settings);

/// An imported model with one tensor per input (from its data file, or random).
struct LoadedOnnxModel {
  onnx::ImportedModel model;
  std::vector<Tensor> inputs;
};

/// Sets the BLAS threads, imports the model with the settings' input dims and reads or draws its
/// inputs. Initializers are constants (inference), or the model's training form when
/// `trainable` (onnx::ImportOptions::trainable).
[[nodiscard]] LoadedOnnxModel load_onnx_model(const OnnxModelSettings& settings,
                                              bool trainable = false);

struct OnnxProfileSettings {
  int iterations = 10;
  int warmup = 1;
  std::string json_path;
  std::string trace_path;  ///< the timeline's file (tracing already on); empty: none
  std::string html_path;   ///< the HTML report's file; empty: none
  bool min_peak = false;  ///< search the minimum memory peak over node orders
};

/// `tscope profile model.onnx`: imports the model, runs warm-up then timed inferences with the
/// profiler on and prints the report. Returns the exit status.
int profile_onnx_model(const OnnxModelSettings& model, const OnnxProfileSettings& profile,
                       profile::TextReportOptions report);

/// Adds the BLAS and OpenMP description, the minimum peaks and the timeline to a profile, prints
/// it and writes the --json and --html files the settings name.
void print_and_write_profile(profile::Profile& profile,
                             const OnnxProfileSettings& settings,
                             const profile::TextReportOptions& report);

/// `--train` and the options of a training step of an ONNX model (docs/onnx.md, "Training an
/// imported model").
struct OnnxTrainSettings {
  bool train = false;
  std::string loss = "xent";  ///< xent, mse or mean
  double learning_rate = 0.01;
  double momentum = 0.9;
  std::string labels = "random";  ///< "random" or a .npy / .pb file
  std::string save_model_path;    ///< --save-model (profile only); empty: none
};

/// Adds --train, --loss, --lr, --momentum and --labels (and --save-model when `save_model`) to
/// `command`; each of the others needs --train.
void add_onnx_train_options(CLI::App* command, OnnxTrainSettings& settings, bool save_model);

/// `tscope profile model.onnx --train`: `steps` training steps (the first `profile.warmup` of
/// them left out of the timings) with the profiler on; prints the report and the losses, and
/// writes the trained model for --save-model. Returns the exit status.
int profile_onnx_training(const OnnxModelSettings& model,
                          const OnnxTrainSettings& train,
                          const OnnxProfileSettings& profile,
                          int steps,
                          profile::TextReportOptions report);

/// A compiled training step (its one output is the loss) and the tensors to call it with.
struct OnnxTraining {
  onnx::ImportedModel model;
  Function step;
  std::vector<Tensor> inputs;  ///< the model's inputs, then the labels or targets
};

/// Imports the model trainable and compiles loss, gradients and updates into one function.
/// Errors name the flag they come from (--loss, --labels).
[[nodiscard]] OnnxTraining compile_onnx_training(const OnnxModelSettings& model,
                                                 const OnnxTrainSettings& train,
                                                 FunctionOptions options);

}  // namespace tscope::cli
