// SPDX-License-Identifier: Apache-2.0
// The tscope command line: parses arguments, calls the library, prints errors with their context
// and maps ErrorKind to exit codes (docs/error_handling.md).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <new>
#include <vector>

#include "commands/commands.h"
#include "library_setup.h"
#include "tscope/core/error.h"
#include "tscope/version.h"

namespace {
int exit_code_for(tscope::ErrorKind kind) {
  switch (kind) {
    case tscope::ErrorKind::InvalidArgument:
    case tscope::ErrorKind::BadFlag:
      return 2;
    case tscope::ErrorKind::Io:
    case tscope::ErrorKind::Parse:
      return 3;
    case tscope::ErrorKind::TypeMismatch:
    case tscope::ErrorKind::ShapeMismatch:
    case tscope::ErrorKind::IndexOutOfRange:
      return 4;
    case tscope::ErrorKind::Unsupported:
    case tscope::ErrorKind::NotDifferentiable:
      return 5;
    case tscope::ErrorKind::OutOfMemory:
      return 6;
    case tscope::ErrorKind::Internal:
      return 70;
  }
  return 1;
}
}  // namespace

int main(int argc, char** argv) {
  tscope::cli::reexec_with_library_settings(argv);
  CLI::App app{
      "Tensorscope: a tensor-graph compiler and runtime that tells you where the time and memory "
      "go"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] {
    const tscope::LibraryVersions libraries = tscope::library_versions();
    return fmt::format("tscope {} (commit {})\n{}\n{}\n{}", tscope::version(),
                       tscope::git_commit(), libraries.openblas, libraries.onednn,
                       libraries.sleef);
  });
  std::vector<tscope::cli::Action> actions = {tscope::cli::add_profile_command(app),
                                              tscope::cli::add_ops_command(app),
                                              tscope::cli::add_report_command(app),
                                              tscope::cli::add_diff_command(app),
                                              tscope::cli::add_onnx_conformance_command(app),
                                              tscope::cli::add_run_command(app),
                                              tscope::cli::add_bench_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version exit 0; every usage error exits 2, like BadFlag (CLI11's own codes
    // start at 100 and differ per mistake).
    return app.exit(error) == 0 ? 0 : 2;
  }
  try {
    for (const auto& action : actions) {
      const int status = action();
      if (status >= 0) return status;
    }
  } catch (const tscope::Error& error) {
    std::cerr << "tscope: error: " << error.what() << "\n";
    return exit_code_for(error.kind());
  } catch (const std::bad_alloc&) {
    // Tensors report OutOfMemory with their byte count; this is any other allocation.
    std::cerr << "tscope: error: OutOfMemory: out of memory\n";
    return exit_code_for(tscope::ErrorKind::OutOfMemory);
  } catch (const std::filesystem::filesystem_error& error) {
    std::cerr << "tscope: error: Io: " << error.what() << "\n";
    return exit_code_for(tscope::ErrorKind::Io);
  } catch (const std::exception& error) {
    std::cerr << "tscope: internal error: " << error.what() << "\n";
    return 70;
  }
  return 1;
}
