// SPDX-License-Identifier: Apache-2.0
#pragma once
// Subcommands of the tscope CLI. Each registers its options and returns the action to run.
#include <CLI/CLI.hpp>
#include <functional>

namespace tscope::cli {

using Action = std::function<int()>;

/// `tscope diff --fail-if-slower`: the after profile is slower than the gate allows
/// (docs/error_handling.md).
inline constexpr int kDiffSlowerExitCode = 7;

Action add_profile_command(CLI::App& app);
Action add_ops_command(CLI::App& app);
Action add_report_command(CLI::App& app);
Action add_diff_command(CLI::App& app);
Action add_onnx_conformance_command(CLI::App& app);
Action add_run_command(CLI::App& app);
Action add_bench_command(CLI::App& app);

}  // namespace tscope::cli
