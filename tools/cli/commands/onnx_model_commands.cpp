// SPDX-License-Identifier: Apache-2.0
// `tscope run model.onnx` (print or save the outputs of one inference, for checking against other
// runtimes) and the ONNX path of `tscope profile`.
#include "onnx_model_commands.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>

#include "commands.h"
#include "tscope/onnx/model_inputs.h"
#include "tscope/ops/linalg.h"
#include "tscope/profile/atomic_file.h"
#include "tscope/profile/json_export.h"
#include "tscope/profile/min_peak_search.h"
#include "tscope/profile/report_html.h"
#include "tscope/profile/trace_recorder.h"
#include "tscope/runtime/function.h"
#include "tscope/threads/thread_count.h"
#include "validators.h"

namespace tscope::cli {

LoadedOnnxModel load_onnx_model(const OnnxModelSettings& settings, bool trainable) {
  // oneDNN's parallel regions run on OpenMP, the products on OpenBLAS: --threads sets both.
  if (settings.threads > 0) {
    threads::set_thread_count(settings.threads);
  }
  onnx::ImportOptions options;
  // Inference: weights never change between calls, so as constants they can be repacked once at
  // compile time (PackConvWeights folding) instead of on every call.
  options.initializers_as_constants = !trainable;
  options.trainable = trainable;
  options.random_seed = settings.seed;
  for (const std::string& assignment : settings.input_dims) {
    try {
      auto [name, dims] = onnx::split_assignment(assignment, "--input");
      options.input_dims[name] = onnx::parse_dims(dims);
    } catch (Error& error) {
      error.add_context(fmt::format("in --input {}", assignment));
      throw;
    }
  }
  std::map<std::string, std::filesystem::path, std::less<>> files;
  for (const std::string& assignment : settings.input_data) {
    auto [name, file] = onnx::split_assignment(assignment, "--input-data");
    files[name] = file;
  }
  LoadedOnnxModel loaded{onnx::import_model(settings.model_path, options), {}};
  loaded.inputs = onnx::model_inputs(loaded.model, files, settings.seed);
  return loaded;
}

void add_onnx_model_options(CLI::App* command, OnnxModelSettings& settings) {
  command->add_option("--input", settings.input_dims,
                      "dims of an input with symbolic dims: NAME=D1xD2... (repeatable)");
  command->add_option("--input-data", settings.input_data,
                      "data of an input from a .pb (TensorProto) or .npy file: NAME=FILE "
                      "(repeatable); other inputs get random values");
  command->add_option("--threads", settings.threads, "BLAS and OpenMP threads (default: the libraries')")
      ->check(positive());
  command->add_option("--seed", settings.seed, "seed of the random inputs");
  command->add_option("--channel-block", settings.channel_block,
                      "channels per block of the blocked convolution layout, 8 or 16 (default: "
                      "16 where oneDNN runs AVX-512 code, else 8)")
      ->check(CLI::IsMember({8, 16}));
  command->add_flag("--no-winograd", settings.no_winograd,
                    "direct 3x3 convolutions only (default: Winograd where oneDNN has it, "
                    "AVX-512; results differ from direct by about 1e-5 relative)");
}

int profile_onnx_model(const OnnxModelSettings& model_settings,
                       const OnnxProfileSettings& settings,
                       profile::TextReportOptions report) {
  const LoadedOnnxModel loaded = load_onnx_model(model_settings);
  FunctionOptions options;
  options.name = fmt::format("{} ({} nodes, opset {})",
                             std::filesystem::path(loaded.model.source).filename().string(),
                             loaded.model.node_count, loaded.model.opset);
  options.profile = true;
  options.channel_block = model_settings.channel_block;
  options.winograd = !model_settings.no_winograd;
  Function inference = function(loaded.model.input_variables(), loaded.model.output_variables(), {},
                                options);
  for (int i = 0; i < settings.warmup; ++i) (void)inference(loaded.inputs);
  inference.reset_profile_timings();
  for (int i = 0; i < settings.iterations; ++i) (void)inference(loaded.inputs);
  profile::Profile profile = inference.collector()->snapshot();
  print_and_write_profile(profile, settings, report);
  const double per_inference_ms =
      profile.functions.empty() || profile.functions.front().call_count == 0
          ? 0.0
          : static_cast<double>(profile.functions.front().call_ns) * 1e-6 /
                static_cast<double>(profile.functions.front().call_count);
  std::cout << fmt::format("Inference: {:.3f} ms per call over {} calls ({} warm-up)\n",
                           per_inference_ms, settings.iterations, settings.warmup);
  return 0;
}

void print_and_write_profile(profile::Profile& profile,
                             const OnnxProfileSettings& settings,
                             const profile::TextReportOptions& report) {
  profile.blas = blas_description();
  profile.openmp = threads::describe_threads();
  if (settings.min_peak) profile::add_min_peaks(profile);
  profile::TraceRecord trace;
  if (!settings.trace_path.empty())
    profile.trace = profile::write_trace(settings.trace_path, &trace);
  std::cout << profile::render_text(profile, report);
  if (!settings.html_path.empty()) {
    profile::write_file_atomically(
        settings.html_path,
        profile::render_html(profile, {.n_chart_rows = report.n_ops,
                                       .trace = settings.trace_path.empty() ? nullptr : &trace}));
  }
  if (!settings.json_path.empty()) {
    profile::write_file_atomically(settings.json_path, profile::to_json_text({profile}, report));
  }
}

namespace {
void create_save_directory(const std::filesystem::path& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (!error && !std::filesystem::is_directory(directory, error)) {
    error = std::make_error_code(std::errc::not_a_directory);
  }
  if (error) {
    throw_error(ErrorKind::Io, "--save: cannot create the directory '{}': {}", directory.string(),
                error.message());
  }
}
}  // namespace

Action add_run_command(CLI::App& app) {
  struct Settings {
    OnnxModelSettings model;
    std::string save_directory;
    int max_elements = 16;
  };
  auto settings = std::make_shared<Settings>();
  CLI::App* command = app.add_subcommand(
      "run",
      "Run one inference of an ONNX model and print its outputs (with TSCOPE_FLAGS=profile=true, "
      "also its profile, at exit)");
  command->add_option("model", settings->model.model_path, "the .onnx file")->required();
  add_onnx_model_options(command, settings->model);
  command->add_option("--save", settings->save_directory,
                      "also write each output as DIR/output_K.pb (TensorProto)");
  command->add_option("--max-elements", settings->max_elements,
                      "values printed per output");
  return [command, settings]() {
    if (!command->parsed()) return -1;
    // Before the inference, which may take long: a --save path that cannot be a directory (an
    // existing file, /proc) fails now.
    if (!settings->save_directory.empty()) create_save_directory(settings->save_directory);
    const LoadedOnnxModel loaded = load_onnx_model(settings->model);
    FunctionOptions options;
    options.name = loaded.model.source;
    // options.profile keeps its default, TSCOPE_FLAGS' profile: with profile=true the function
    // joins the process-wide profiles, printed at exit to profiling.destination.
    options.channel_block = settings->model.channel_block;
    options.winograd = !settings->model.no_winograd;
    Function inference =
        function(loaded.model.input_variables(), loaded.model.output_variables(), {}, options);
    const std::vector<Tensor> outputs = inference(loaded.inputs);
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const std::string& name = loaded.model.outputs[k].name;
      std::cout << fmt::format("{}: {} {}\n  {}\n", name, dtype_name(outputs[k].dtype()),
                               outputs[k].shape().to_string(),
                               outputs[k].to_string(settings->max_elements));
      if (!settings->save_directory.empty()) {
        onnx::write_tensor_file(
            std::filesystem::path(settings->save_directory) / fmt::format("output_{}.pb", k),
            outputs[k], name);
      }
    }
    return 0;
  };
}

}  // namespace tscope::cli
