// SPDX-License-Identifier: Apache-2.0
// scan: the loop builder. The Python step function runs while scan() builds the body, with no
// provenance scope active, so each node it builds points at its own line of the step function;
// the loop's own nodes point at the line that called scan (ScanOptions::provenance).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "binding.h"
#include "operands.h"
#include "python_site.h"
#include "tscope/graph/apply.h"
#include "tscope/runtime/scan.h"

namespace tscope::python {
namespace {

// The step's result as tensorscope/loops.py normalises it: (outputs, [(shared, new value)],
// stop condition or None).
ScanStep step_result(const py::object& returned) {
  const auto parts = returned.cast<py::tuple>();
  ScanStep step(std::vector<Variable>{});
  for (const py::handle item : parts[0]) step.outputs.push_back(to_variable(item));
  for (const py::handle pair : parts[1]) {
    const auto items = pair.cast<py::tuple>();
    step.updates.push_back({to_variable(items[0]), to_variable(items[1])});
  }
  if (parts.size() > 2 && !parts[2].is_none()) step.until = to_variable(parts[2]);
  return step;
}

}  // namespace

void bind_loop(py::module_& module) {
  module.def(
      "scan",
      [](const py::function& step,
         const std::vector<std::pair<Variable, std::vector<std::int64_t>>>& sequences,
         const std::vector<std::pair<std::optional<Variable>, std::vector<std::int64_t>>>&
             outputs_info,
         const std::vector<Variable>& non_sequences, const py::object& n_steps, bool go_backwards,
         const std::string& name) {
        std::vector<ScanSequence> scan_sequences;
        for (const auto& [value, taps] : sequences) scan_sequences.emplace_back(value, taps);
        std::vector<ScanOutput> scan_outputs;
        for (const auto& [initial, taps] : outputs_info) {
          scan_outputs.push_back(initial.has_value() ? ScanOutput(*initial, taps)
                                                     : ScanOutput::none());
        }
        ScanOptions options;
        options.name = name.empty() ? "scan_fn" : name;
        options.go_backwards = go_backwards;
        options.provenance = Provenance{python_caller_site(), "scan"};
        if (!n_steps.is_none()) {
          if (py::isinstance<Variable>(n_steps)) {
            options.n_steps = DimArg(n_steps.cast<Variable>());
          } else {
            options.n_steps = DimArg(n_steps.cast<std::int64_t>());
          }
        }
        const ScanResult result = scan(
            [&step](const std::vector<Variable>& inputs) {
              py::tuple arguments(inputs.size());
              for (std::size_t i = 0; i < inputs.size(); ++i) arguments[i] = py::cast(inputs[i]);
              return step_result(step(*arguments));
            },
            scan_sequences, scan_outputs, non_sequences, options);
        py::list updates;
        for (const Update& update : result.updates) {
          updates.append(py::make_tuple(update.shared, update.new_value));
        }
        return py::make_tuple(result.outputs, updates);
      },
      py::arg("step"), py::arg("sequences"), py::arg("outputs_info"), py::arg("non_sequences"),
      py::arg("n_steps"), py::arg("go_backwards"), py::arg("name"));
}

}  // namespace tscope::python
