// SPDX-License-Identifier: Apache-2.0
#include "tscope/onnx/conformance.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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

CaseResult run_data_sets(const ConformanceCase& test, const Tolerance& tolerance) {
  // Inference with constant weights, as `tscope run` imports: the backend tests then also check
  // the compile-time rewrites constants enable (convolutions on the channel-blocked layout).
  ImportOptions import_options;
  import_options.initializers_as_constants = true;
  const ImportedModel model = import_model(test.directory / "model.onnx", import_options);
  FunctionOptions options;
  options.name = test.id();
  options.profile = false;
  Function function_ = function(model.input_variables(), model.output_variables(), {}, options);
  std::vector<fs::path> data_sets;
  for (const fs::directory_entry& entry : fs::directory_iterator(test.directory)) {
    if (entry.is_directory() && entry.path().filename().string().starts_with("test_data_set_")) {
      data_sets.push_back(entry.path());
    }
  }
  std::sort(data_sets.begin(), data_sets.end());
  if (data_sets.empty()) return {test, CaseStatus::Fail, "no test_data_set_N directory"};
  for (const fs::path& data_set : data_sets) {
    const std::vector<fs::path> input_files = numbered_files(data_set, "input");
    const std::vector<fs::path> output_files = numbered_files(data_set, "output");
    if (input_files.size() != model.inputs.size()) {
      return {test, CaseStatus::Unsupported,
              fmt::format("{} input files for {} graph inputs (optional inputs given as data)",
                          input_files.size(), model.inputs.size())};
    }
    std::vector<Tensor> inputs;
    for (const fs::path& file : input_files) inputs.push_back(read_tensor_file(file));
    std::vector<Tensor> outputs = function_(inputs);
    if (output_files.size() != outputs.size()) {
      return {test, CaseStatus::Fail,
              fmt::format("{} outputs, {} expected", outputs.size(), output_files.size())};
    }
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const std::string difference =
          compare(outputs[k], read_tensor_file(output_files[k]), tolerance);
      if (!difference.empty()) {
        return {test, CaseStatus::Fail,
                fmt::format("{} output {} ('{}'): {}", data_set.filename().string(), k,
                            model.outputs[k].name, difference)};
      }
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
