// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Runs ONNX backend test cases (the layout of ONNX's test data, Debian's libonnx-testdata:
/// <root>/<category>/<test>/model.onnx with test_data_set_N/{input,output}_K.pb) and compares
/// the outputs with ONNX's tolerances. A case is Pass, Fail (wrong result or an error that is not
/// Unsupported), or Unsupported (an op, attribute or type Tensorscope does not implement): never
/// silently skipped.
#include <filesystem>
#include <string>
#include <vector>

#pragma GCC visibility push(default)

namespace tscope::onnx {

/// Where Debian's libonnx-testdata installs the cases.
inline constexpr const char* kDefaultTestDataRoot = "/usr/share/libonnx-testdata/data";

struct ConformanceCase {
  std::string category;  ///< "node", "pytorch-converted", "pytorch-operator", "simple"
  std::string name;      ///< "test_add"
  std::filesystem::path directory;
  [[nodiscard]] std::string id() const { return category + "/" + name; }
};

enum class CaseStatus { Pass, Fail, Unsupported };

struct CaseResult {
  ConformanceCase test;
  CaseStatus status = CaseStatus::Fail;
  std::string detail;  ///< why it failed or is unsupported; empty on Pass
};

/// ONNX backend-test tolerances: |actual - expected| <= atol + rtol * |expected|.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

/// Every case under `root`, sorted by id. Io error when `root` does not exist.
[[nodiscard]] std::vector<ConformanceCase> discover_cases(const std::filesystem::path& root);

/// Imports, compiles and runs one case on every data set it has.
[[nodiscard]] CaseResult run_case(const ConformanceCase& test, const Tolerance& tolerance = {});

[[nodiscard]] std::string_view status_name(CaseStatus status) noexcept;

}  // namespace tscope::onnx

#pragma GCC visibility pop
