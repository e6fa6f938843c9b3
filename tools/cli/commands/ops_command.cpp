// SPDX-License-Identifier: Apache-2.0
// `tscope ops`: list the op registry.
#include <fmt/format.h>

#include <iostream>

#include "commands.h"
#include "tscope/ops/registry.h"

namespace tscope::cli {

Action add_ops_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand("ops", "List the registered ops");
  return [command]() {
    if (!command->parsed()) return -1;
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
