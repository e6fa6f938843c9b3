// SPDX-License-Identifier: Apache-2.0
#pragma once
// Options shared by the commands that run an ONNX model (`tscope run`, `tscope profile
// model.onnx`): input dims, input data files, the random seed and BLAS threads.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "tscope/onnx/import.h"
#include "tscope/profile/report_text.h"

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
/// inputs.
[[nodiscard]] LoadedOnnxModel load_onnx_model(const OnnxModelSettings& settings);

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

}  // namespace tscope::cli
