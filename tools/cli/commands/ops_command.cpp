// SPDX-License-Identifier: Apache-2.0
// `tscope ops`: list the op registry; `tscope ops --onnx`: the ONNX op types the importer converts.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.h"
#include "tscope/onnx/import.h"
#include "tscope/ops/registry.h"

namespace tscope::cli {

Action add_ops_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand("ops", "List the registered ops");
  auto onnx_types = std::make_shared<bool>(false);
  command->add_flag("--onnx", *onnx_types, "list the ONNX op types the importer converts instead");
  return [command, onnx_types]() {
    if (!command->parsed()) return -1;
    if (*onnx_types) {
      for (const std::string& type : onnx::supported_op_types()) std::cout << type << "\n";
      return 0;
    }
    for (const OpDef* def : op_registry().all()) {
      std::cout << fmt::format(
          "{:<14} {:<12} ref{}{} {}{}  {}\n", def->name, def->family,
          def->fast.available() ? "+" : "",
          def->fast.available() ? std::string(def->fast.name) : "",
          def->pullback != nullptr ? "grad" : (def->traits.zero_gradient ? "zero-grad" : "no-grad"),
          def->cost != nullptr ? " cost" : "", def->summary);
    }
    return 0;
  };
}

}  // namespace tscope::cli
