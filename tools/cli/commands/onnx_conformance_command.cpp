// SPDX-License-Identifier: Apache-2.0
// `tscope onnx-conformance`: runs ONNX's backend test cases (libonnx-testdata), prints pass /
// fail / unsupported counts by category, and with --expected fails when a case listed there does
// not pass (the regression gate CI runs).
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "commands.h"
#include "tscope/core/error.h"
#include "tscope/onnx/conformance.h"
#include "tscope/profile/atomic_file.h"

namespace tscope::cli {
namespace {

struct Counts {
  int pass = 0;
  int fail = 0;
  int unsupported = 0;
};

std::set<std::string> read_expected(const std::string& path) {
  std::ifstream stream(path);
  if (!stream) throw_error(ErrorKind::Io, "cannot open expected-pass list '{}'", path);
  std::set<std::string> ids;
  std::string line;
  while (std::getline(stream, line)) {
    if (line.empty() || line.front() == '#') continue;
    ids.insert(line);
  }
  return ids;
}

}  // namespace

Action add_onnx_conformance_command(CLI::App& app) {
  struct Settings {
    std::string data_root = onnx::kDefaultTestDataRoot;
    std::string expected_path;
    std::string write_expected_path;
    std::string filter;
    bool verbose = false;
  };
  auto settings = std::make_shared<Settings>();
  CLI::App* command = app.add_subcommand(
      "onnx-conformance", "Run ONNX's backend test cases and print pass counts by category");
  command->add_option("--data", settings->data_root, "test data root (<category>/<test>/model.onnx)");
  command->add_option("--expected", settings->expected_path,
                      "file of case ids that must pass; exit 1 when one does not");
  command->add_option("--write-expected", settings->write_expected_path,
                      "write the ids of the passing cases to this file");
  command->add_option("--filter", settings->filter, "run only cases whose id contains this text");
  command->add_flag("--verbose", settings->verbose,
                    "list every failing and unsupported case with the reason");
  return [command, settings]() {
    if (!command->parsed()) return -1;
    const std::vector<onnx::ConformanceCase> cases = onnx::discover_cases(settings->data_root);
    std::map<std::string, Counts> by_category;
    std::vector<onnx::CaseResult> results;
    for (const onnx::ConformanceCase& test : cases) {
      if (!settings->filter.empty() && test.id().find(settings->filter) == std::string::npos) continue;
      onnx::CaseResult result = onnx::run_case(test);
      Counts& counts = by_category[test.category];
      switch (result.status) {
        case onnx::CaseStatus::Pass: ++counts.pass; break;
        case onnx::CaseStatus::Fail: ++counts.fail; break;
        case onnx::CaseStatus::Unsupported: ++counts.unsupported; break;
      }
      if (settings->verbose && result.status != onnx::CaseStatus::Pass) {
        std::cout << fmt::format("{:<12} {}: {}\n", onnx::status_name(result.status), test.id(),
                                 result.detail);
      }
      results.push_back(std::move(result));
    }
    std::cout << fmt::format("{:<20} {:>6} {:>6} {:>12} {:>6}\n", "category", "pass", "fail",
                             "unsupported", "total");
    Counts total;
    for (const auto& [category, counts] : by_category) {
      std::cout << fmt::format("{:<20} {:>6} {:>6} {:>12} {:>6}\n", category, counts.pass,
                               counts.fail, counts.unsupported,
                               counts.pass + counts.fail + counts.unsupported);
      total.pass += counts.pass;
      total.fail += counts.fail;
      total.unsupported += counts.unsupported;
    }
    std::cout << fmt::format("{:<20} {:>6} {:>6} {:>12} {:>6}\n", "all", total.pass, total.fail,
                             total.unsupported, total.pass + total.fail + total.unsupported);
    if (!settings->write_expected_path.empty()) {
      std::string text = "# ONNX backend cases that pass; `tscope onnx-conformance --expected` "
                         "fails when one stops passing.\n";
      for (const onnx::CaseResult& result : results) {
        if (result.status == onnx::CaseStatus::Pass) text += result.test.id() + "\n";
      }
      profile::write_file_atomically(settings->write_expected_path, text);
    }
    if (settings->expected_path.empty()) return 0;
    const std::set<std::string> expected = read_expected(settings->expected_path);
    int regressions = 0;
    std::set<std::string> seen;
    for (const onnx::CaseResult& result : results) {
      seen.insert(result.test.id());
      if (expected.count(result.test.id()) == 0 || result.status == onnx::CaseStatus::Pass) continue;
      ++regressions;
      std::cout << fmt::format("REGRESSION {} ({}): {}\n", result.test.id(),
                               onnx::status_name(result.status), result.detail);
    }
    if (settings->filter.empty()) {
      for (const std::string& id : expected) {
        if (seen.count(id) != 0) continue;
        ++regressions;
        std::cout << fmt::format("REGRESSION {}: the case is missing from '{}'\n", id,
                                 settings->data_root);
      }
    }
    if (regressions > 0) {
      std::cout << fmt::format("{} expected case(s) no longer pass\n", regressions);
      return 1;
    }
    std::cout << fmt::format("all {} expected cases pass\n", expected.size());
    return 0;
  };
}

}  // namespace tscope::cli
