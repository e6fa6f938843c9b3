// SPDX-License-Identifier: Apache-2.0
// `tscope bench model.onnx [--train]`: times inference (or training steps) of an ONNX model
// (profiler off) and prints the time per call as one machine-readable line, for scripts/bench_onnx
// and for comparing runs.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <utility>
#include <vector>

#include "commands.h"
#include "onnx_model_commands.h"
#include "tscope/runtime/function.h"
#include "validators.h"

namespace tscope::cli {
namespace {

struct BenchSettings {
  OnnxModelSettings model;
  OnnxTrainSettings train;
  int iterations = 20;
  int warmup = 3;
};

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2.0;
}

// The function timed and its inputs: one inference, or with --train one training step (whose
// updates change the weights every call, as in training).
std::pair<Function, std::vector<Tensor>> timed_function(const BenchSettings& settings) {
  FunctionOptions options;
  options.profile = false;
  if (settings.train.train) {
    OnnxTraining training = compile_onnx_training(settings.model, settings.train, options);
    return {std::move(training.step), std::move(training.inputs)};
  }
  LoadedOnnxModel loaded = load_onnx_model(settings.model);
  options.name = loaded.model.source;
  options.channel_block = settings.model.channel_block;
  options.winograd = !settings.model.no_winograd;
  Function inference =
      function(loaded.model.input_variables(), loaded.model.output_variables(), {}, options);
  return {std::move(inference), std::move(loaded.inputs)};
}

int run_bench(const BenchSettings& settings) {
  const auto [timed, inputs] = timed_function(settings);
  for (int i = 0; i < settings.warmup; ++i) (void)timed(inputs);
  std::vector<double> times_ms;
  times_ms.reserve(static_cast<std::size_t>(settings.iterations));
  for (int i = 0; i < settings.iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    (void)timed(inputs);
    const std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    times_ms.push_back(elapsed.count());
  }
  std::cout << fmt::format(
      "bench runtime=tscope model={} threads={} iters={} min_ms={:.3f} median_ms={:.3f}\n",
      std::filesystem::path(settings.model.model_path).stem().string(), settings.model.threads,
      settings.iterations, *std::min_element(times_ms.begin(), times_ms.end()),
      median_of(times_ms));
  return 0;
}

}  // namespace

Action add_bench_command(CLI::App& app) {
  auto settings = std::make_shared<BenchSettings>();
  CLI::App* command = app.add_subcommand(
      "bench",
      "Time inference (or, with --train, training steps) of an ONNX model (profiler off): min "
      "and median ms per call");
  command->add_option("model", settings->model.model_path, "the .onnx file")->required();
  add_onnx_model_options(command, settings->model);
  add_onnx_train_options(command, settings->train, /*save_model=*/false);
  command->add_option("--iters", settings->iterations, "timed calls")->check(positive());
  command->add_option("--warmup", settings->warmup, "untimed calls first")
      ->check(non_negative());
  return [command, settings]() {
    if (!command->parsed()) return -1;
    return run_bench(*settings);
  };
}

}  // namespace tscope::cli
