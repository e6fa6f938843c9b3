// SPDX-License-Identifier: Apache-2.0
#include "tscope/onnx/conformance.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string_view>

#include "converter.h"
#include "reader.h"
#include "tscope/core/error.h"
#include "tscope/onnx/import.h"
#include "tscope/runtime/function.h"

namespace tscope::onnx {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> numbered_files(const fs::path& directory, std::string_view prefix) {
  std::vector<fs::path> files;
  for (int index = 0;; ++index) {
    fs::path file = directory / fmt::format("{}_{}.pb", prefix, index);
    if (!fs::exists(file)) break;
    files.push_back(std::move(file));
  }
  return files;
}

/// Empty when `actual` matches `expected`, else what differs.
std::string compare(const Tensor& actual, const Tensor& expected, const Tolerance& tolerance) {
  if (actual.dtype() != expected.dtype()) {
    return fmt::format("dtype {} instead of {}", dtype_name(actual.dtype()),
                       dtype_name(expected.dtype()));
  }
  if (!(actual.shape() == expected.shape())) {
    return fmt::format("shape {} instead of {}", actual.shape().to_string(),
                       expected.shape().to_string());
  }
  const std::vector<double> got = actual.to_doubles();
  const std::vector<double> want = expected.to_doubles();
  const bool exact = !is_floating(expected.dtype());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double a = got[i];
    const double b = want[i];
    if (std::isnan(a) && std::isnan(b)) continue;
    if (exact ? a == b : (a == b || std::abs(a - b) <= tolerance.atol + tolerance.rtol * std::abs(b))) {
      continue;
    }
    return fmt::format("element {} is {} instead of {}", i, a, b);
  }
  return {};
}

std::vector<fs::path> data_set_directories(const fs::path& directory) {
  std::vector<fs::path> data_sets;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    if (entry.is_directory() && entry.path().filename().string().starts_with("test_data_set_")) {
      data_sets.push_back(entry.path());
    }
  }
  std::sort(data_sets.begin(), data_sets.end());
  return data_sets;
}

// Inference with constant weights, as `tscope run` imports: the backend tests then also check
// the compile-time rewrites constants enable (convolutions on the channel-blocked layout).
ImportOptions inference_import_options() {
  ImportOptions options;
  options.initializers_as_constants = true;
  return options;
}

// Runs one data set through `model`, whose inputs are the data set's first inputs (the last
// `bound` were bound at import), and compares the outputs; nothing when they match.
std::optional<CaseResult> check_data_set(const ConformanceCase& test, const ImportedModel& model,
                                         const fs::path& data_set, std::size_t bound,
                                         const Tolerance& tolerance) {
  const std::vector<fs::path> input_files = numbered_files(data_set, "input");
  const std::vector<fs::path> output_files = numbered_files(data_set, "output");
  if (input_files.size() != model.inputs.size() + bound) {
    return CaseResult{test, CaseStatus::Unsupported,
                      fmt::format("{} input files for {} graph inputs (optional inputs given as data)",
                                  input_files.size(), model.inputs.size() + bound)};
  }
  FunctionOptions options;
  options.name = test.id();
  options.profile = false;
  Function function_ = function(model.input_variables(), model.output_variables(), {}, options);
  std::vector<Tensor> inputs;
  for (std::size_t k = 0; k < model.inputs.size(); ++k) {
    inputs.push_back(read_tensor_file(input_files[k]));
  }
  std::vector<Tensor> outputs = function_(inputs);
  if (output_files.size() != outputs.size()) {
    return CaseResult{test, CaseStatus::Fail,
                      fmt::format("{} outputs, {} expected", outputs.size(), output_files.size())};
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const std::string difference = compare(outputs[k], read_tensor_file(output_files[k]), tolerance);
    if (!difference.empty()) {
      return CaseResult{test, CaseStatus::Fail,
                        fmt::format("{} output {} ('{}'): {}", data_set.filename().string(), k,
                                    model.outputs[k].name, difference)};
    }
  }
  return std::nullopt;
}

// The graph inputs that are not initializers, in order.
std::vector<std::string> graph_input_names(const fs::path& model_path) {
  const ::onnx::ModelProto proto = parse_model(read_file_bytes(model_path), model_path.string());
  std::set<std::string> initializers;
  for (const ::onnx::TensorProto& initializer : proto.graph().initializer()) {
    initializers.insert(initializer.name());
  }
  std::vector<std::string> names;
  for (const ::onnx::ValueInfoProto& input : proto.graph().input()) {
    if (!initializers.contains(input.name())) names.push_back(input.name());
  }
  return names;
}

// Backend tests feed an op's parameters (Resize's scales, TopK's k, Expand's shape) as graph
// inputs, which the converters need at import time. Such a case runs once per data set with every
// input but the first bound to the data set's values: the data still flows through the compiled
// graph, and the parameters are what the test gives.
CaseResult run_with_bound_parameters(const ConformanceCase& test, const Tolerance& tolerance) {
  const fs::path model_path = test.directory / "model.onnx";
  const std::vector<std::string> names = graph_input_names(model_path);
  for (const fs::path& data_set : data_set_directories(test.directory)) {
    const std::vector<fs::path> input_files = numbered_files(data_set, "input");
    if (names.size() < 2 || input_files.size() != names.size()) {
      return {test, CaseStatus::Unsupported,
              "a parameter input must be known at import and the data does not give each input"};
    }
    ImportOptions options = inference_import_options();
    for (std::size_t k = 1; k < names.size(); ++k) {
      options.input_values[names[k]] = read_tensor_file(input_files[k]);
    }
    const ImportedModel model = import_model(model_path, options);
    if (std::optional<CaseResult> failure =
            check_data_set(test, model, data_set, names.size() - 1, tolerance)) {
      return *failure;
    }
  }
  return {test, CaseStatus::Pass, "parameter inputs bound to the data set's values at import"};
}

CaseResult run_data_sets(const ConformanceCase& test, const Tolerance& tolerance) {
  const std::vector<fs::path> data_sets = data_set_directories(test.directory);
  if (data_sets.empty()) return {test, CaseStatus::Fail, "no test_data_set_N directory"};
  std::optional<ImportedModel> model;
  try {
    model = import_model(test.directory / "model.onnx", inference_import_options());
  } catch (const Error& error) {
    const bool needs_parameters = error.kind() == ErrorKind::Unsupported &&
                                  std::string_view(error.what()).find(kNeedsImportTimeValue) !=
                                      std::string_view::npos;
    if (!needs_parameters) throw;
    return run_with_bound_parameters(test, tolerance);
  }
  for (const fs::path& data_set : data_sets) {
    if (std::optional<CaseResult> failure = check_data_set(test, *model, data_set, 0, tolerance)) {
      return *failure;
    }
  }
  return {test, CaseStatus::Pass, ""};
}

}  // namespace

std::vector<ConformanceCase> discover_cases(const fs::path& root) {
  if (!fs::is_directory(root)) {
    throw_error(ErrorKind::Io, "ONNX test data directory '{}' does not exist (Debian package "
                               "libonnx-testdata)", root.string());
  }
  std::vector<ConformanceCase> cases;
  for (const fs::directory_entry& category : fs::directory_iterator(root)) {
    if (!category.is_directory()) continue;
    for (const fs::directory_entry& test : fs::directory_iterator(category.path())) {
      if (!fs::exists(test.path() / "model.onnx")) continue;
      cases.push_back({category.path().filename().string(), test.path().filename().string(),
                       test.path()});
    }
  }
  std::sort(cases.begin(), cases.end(),
            [](const ConformanceCase& a, const ConformanceCase& b) { return a.id() < b.id(); });
  return cases;
}

CaseResult run_case(const ConformanceCase& test, const Tolerance& tolerance) {
  try {
    return run_data_sets(test, tolerance);
  } catch (const Error& error) {
    const CaseStatus status =
        error.kind() == ErrorKind::Unsupported ? CaseStatus::Unsupported : CaseStatus::Fail;
    std::string detail = error.what();
    std::replace(detail.begin(), detail.end(), '\n', ' ');
    return {test, status, std::move(detail)};
  } catch (const std::exception& error) {
    return {test, CaseStatus::Fail, fmt::format("exception: {}", error.what())};
  }
}

std::string_view status_name(CaseStatus status) noexcept {
  switch (status) {
    case CaseStatus::Pass: return "pass";
    case CaseStatus::Fail: return "fail";
    case CaseStatus::Unsupported: return "unsupported";
  }
  return "fail";
}

}  // namespace tscope::onnx
