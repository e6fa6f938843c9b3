// SPDX-License-Identifier: Apache-2.0
// function() and the compiled Function as Python objects. A call converts its arguments with
// numpy_tensor.h (no copy for C-contiguous arrays of the input's dtype), runs without the GIL, so
// several Python threads can call at once, and hands the result buffers to NumPy.
#include <unordered_set>

#include <pybind11/stl.h>

#include "binding.h"
#include "numpy_tensor.h"
#include "operands.h"
#include "python_site.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/clone_replace.h"
#include "tscope/graph/traversal.h"
#include "tscope/profile/global_profiles.h"
#include "tscope/profile/profile_options.h"
#include "tscope/runtime/function.h"

namespace tscope::python {
namespace {

struct PythonFunction {
  Function function;
  std::vector<DType> input_dtypes;
  bool single_output = false;

  py::object call(const py::args& args) const {
    std::vector<Tensor> inputs;
    inputs.reserve(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::optional<DType> hint =
          i < input_dtypes.size() ? std::optional<DType>(input_dtypes[i]) : std::nullopt;
      try {
        inputs.push_back(tensor_from_object(args[i], hint));
      } catch (Error& error) {
        throw error.add_context(
            fmt::format("while converting argument {} of function '{}'", i, function.name()));
      }
    }
    std::vector<Tensor> outputs;
    {
      py::gil_scoped_release no_gil;
      outputs = function(inputs);
      inputs.clear();  // the engine keeps what it still needs
    }
    release_pending_arrays();
    if (single_output) return array_from_tensor(std::move(outputs[0]));
    py::list results(outputs.size());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      results[i] = array_from_tensor(std::move(outputs[i]));
    }
    return results;
  }
};

std::vector<Update> to_updates(const py::iterable& pairs) {
  std::vector<Update> updates;
  for (const py::handle pair : pairs) {
    const auto items = pair.cast<py::sequence>();
    if (items.size() != 2) {
      throw_error(ErrorKind::InvalidArgument,
                  "function: each update is a (shared variable, new value) pair, got {} items",
                  items.size());
    }
    updates.push_back({to_variable(items[0]), to_variable(items[1])});
  }
  return updates;
}

std::vector<std::pair<Variable, Variable>> to_givens(const py::iterable& pairs) {
  std::vector<std::pair<Variable, Variable>> givens;
  for (const py::handle pair : pairs) {
    const auto items = pair.cast<py::sequence>();
    if (items.size() != 2 || !py::isinstance<Variable>(items[0])) {
      throw_error(ErrorKind::InvalidArgument,
                  "function: each given is a (Variable, replacement) pair");
    }
    givens.emplace_back(items[0].cast<Variable>(), to_variable(items[1]));
  }
  return givens;
}

// Theano's default updates: of `candidates` (the random streams' state updates), those whose
// shared variable the outputs or updates read and that the caller does not update already.
void add_default_updates(const std::vector<Variable>& outputs,
                         const std::vector<Update>& candidates, std::vector<Update>& updates) {
  if (candidates.empty()) return;
  std::vector<Variable> roots = outputs;
  for (const Update& update : updates) roots.push_back(update.new_value);
  std::unordered_set<const VariableNode*> read;
  for (const ApplyNode* node : ancestors_in_topological_order(roots)) {
    for (const Variable& input : node->inputs()) read.insert(input.node());
  }
  std::unordered_set<const VariableNode*> updated;
  for (const Update& update : updates) updated.insert(update.shared.node());
  for (const Update& candidate : candidates) {
    if (read.count(candidate.shared.node()) != 0 && updated.count(candidate.shared.node()) == 0) {
      updates.push_back(candidate);
    }
  }
}

}  // namespace

void bind_function(py::module_& module) {
  py::class_<PythonFunction>(module, "Function", py::dynamic_attr(),
                            "A compiled function (tensorscope.function).")
      .def("__call__", &PythonFunction::call)
      .def_property_readonly("name", [](const PythonFunction& f) { return f.function.name(); })
      .def_property_readonly("collector",
                             [](const PythonFunction& f) { return f.function.collector(); })
      .def("reset_profile_timings",
           [](const PythonFunction& f) { f.function.reset_profile_timings(); })
      .def("graph_text", [](const PythonFunction& f) {
        std::string text;
        for (const auto& node : f.function.graph().toposort()) text += node->to_string() + "\n";
        return text;
      }, "The compiled graph, one node per line, in execution order.");

  module.def(
      "function",
      [](const std::vector<Variable>& inputs, const py::iterable& outputs, bool single_output,
         const py::iterable& updates, const py::iterable& givens, const std::string& name,
         const std::shared_ptr<profile::ProfileCollector>& collector, bool profile,
         bool global_profile, const py::dict& options, const py::iterable& default_updates) {
        PythonSite site("function");
        std::vector<Variable> output_variables;
        for (const py::handle output : outputs) output_variables.push_back(to_variable(output));
        std::vector<Update> update_list = to_updates(updates);
        const std::size_t output_count = output_variables.size();
        // Outputs and update values go through givens together, as one list.
        for (const Update& update : update_list) output_variables.push_back(update.new_value);
        try {
          output_variables = clone_replace(output_variables, to_givens(givens));
        } catch (Error& error) {
          throw error.add_context("in the givens of function()");
        }
        for (std::size_t i = 0; i < update_list.size(); ++i) {
          update_list[i].new_value = output_variables[output_count + i];
        }
        output_variables.resize(output_count);
        add_default_updates(output_variables, to_updates(default_updates), update_list);
        FunctionOptions function_options;
        function_options.name = name.empty() ? python_caller_site().short_string() : name;
        function_options.profile = profile || collector != nullptr;
        function_options.collector = collector;
        for (const auto& [key, value] : options) {
          const auto option = key.cast<std::string>();
          if (option == "profile_memory") {
            function_options.profile_memory = value.cast<bool>();
          } else if (option == "allow_gc") {
            function_options.allow_gc = value.cast<bool>();
          } else if (option == "ignore_first_call") {
            function_options.ignore_first_call = value.cast<bool>();
          } else if (option == "excluded_rewrites") {
            function_options.excluded_rewrites = value.cast<std::vector<std::string>>();
          } else {
            throw_error(ErrorKind::InvalidArgument, "function: unknown option '{}'", option);
          }
        }
        std::vector<DType> input_dtypes;
        for (const Variable& input : inputs) input_dtypes.push_back(input.dtype());
        PythonFunction result{
            function(inputs, output_variables, update_list, function_options),
            std::move(input_dtypes), single_output};
        // TSCOPE_FLAGS=profile=true registers every profiled function already; ts.config.profile
        // set from Python does it here.
        if (global_profile && !profile::process_flags().profile && result.function.collector()) {
          profile::GlobalProfiles::instance().add(result.function.collector());
        }
        return result;
      },
      py::arg("inputs"), py::arg("outputs"), py::arg("single_output"), py::arg("updates"),
      py::arg("givens"), py::arg("name"), py::arg("collector"), py::arg("profile"),
      py::arg("global_profile"), py::arg("options"), py::arg("default_updates"));
}

}  // namespace tscope::python
