// SPDX-License-Identifier: Apache-2.0
// function() and the compiled Function as Python objects. A call binds its arguments to the inputs
// (positionally, by keyword, or from an input's default value), converts them with numpy_tensor.h
// (no copy for C-contiguous arrays of the input's dtype; other dtypes as the input's InputCast
// allows), runs without the GIL, so several Python threads can call at once, and hands the result
// buffers to NumPy.
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

// One input as a call sees it (ts.In's settings).
struct InputSpec {
  DType dtype = DType::Float64;
  InputCast cast = InputCast::FloatX;
  std::string name;          // the keyword that names it; empty: positional only
  py::object default_value;  // null: the argument is required
};

struct PythonFunction {
  Function function;
  std::vector<InputSpec> inputs;
  DType float_x = DType::Float64;
  bool single_output = false;

  // The argument of each input: positional ones first, then keywords, then default values.
  std::vector<py::handle> bind(const py::args& args, const py::kwargs& kwargs) const {
    if (args.size() > inputs.size()) {
      throw_error(ErrorKind::InvalidArgument, "function '{}' takes {} inputs, {} given",
                  function.name(), inputs.size(), args.size());
    }
    std::vector<py::handle> values(inputs.size());
    for (std::size_t i = 0; i < args.size(); ++i) values[i] = args[i];
    for (const auto& [key, value] : kwargs) {
      const auto keyword = key.cast<std::string>();
      std::size_t index = 0;
      while (index < inputs.size() && inputs[index].name != keyword) ++index;
      if (index == inputs.size()) {
        throw_error(ErrorKind::InvalidArgument, "function '{}' has no input named '{}'",
                    function.name(), keyword);
      }
      if (values[index]) {
        throw_error(ErrorKind::InvalidArgument,
                    "function '{}': input {} ('{}') is given both by position and by keyword",
                    function.name(), index, keyword);
      }
      values[index] = value;
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (values[i]) continue;
      if (!inputs[i].default_value) {
        throw_error(ErrorKind::InvalidArgument,
                    "function '{}' takes {} inputs, {} given; input {}{} has no default value",
                    function.name(), inputs.size(), args.size() + kwargs.size(), i,
                    inputs[i].name.empty() ? "" : " ('" + inputs[i].name + "')");
      }
      values[i] = inputs[i].default_value;
    }
    return values;
  }

  py::object call(const py::args& args, const py::kwargs& kwargs) const {
    std::vector<Tensor> tensors;
    tensors.reserve(inputs.size());
    if (kwargs.empty() && args.size() == inputs.size()) {
      for (std::size_t i = 0; i < inputs.size(); ++i) tensors.push_back(convert(i, args[i]));
    } else {
      const std::vector<py::handle> values = bind(args, kwargs);
      for (std::size_t i = 0; i < inputs.size(); ++i) tensors.push_back(convert(i, values[i]));
    }
    return run(std::move(tensors));
  }

  Tensor convert(std::size_t index, const py::handle& value) const {
    const InputSpec& spec = inputs[index];
    try {
      return tensor_for_input(value, spec.dtype, spec.cast, float_x);
    } catch (Error& error) {
      throw error.add_context(fmt::format("while converting argument {} of function '{}'{}", index,
                                          function.name(),
                                          spec.name.empty() ? "" : " (input '" + spec.name + "')"));
    }
  }

  py::object run(std::vector<Tensor> arguments) const {
    std::vector<Tensor> outputs;
    {
      py::gil_scoped_release no_gil;
      outputs = function(arguments);
      arguments.clear();  // the engine keeps what it still needs
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

InputCast to_input_cast(const std::string& name) {
  if (name == "strict") return InputCast::Strict;
  if (name == "safe") return InputCast::Safe;
  if (name == "floatx") return InputCast::FloatX;
  if (name == "any") return InputCast::Any;
  throw_error(ErrorKind::InvalidArgument, "function: input cast '{}' is unknown", name);
}

// One (name, default value or None, has a default, cast) tuple per input, from tensorscope.In.
std::vector<InputSpec> to_input_specs(const std::vector<Variable>& inputs,
                                      const py::iterable& specs) {
  std::vector<InputSpec> result;
  for (const py::handle spec : specs) {
    const auto items = spec.cast<py::tuple>();
    InputSpec input;
    input.name = items[0].cast<std::string>();
    if (items[2].cast<bool>()) input.default_value = py::reinterpret_borrow<py::object>(items[1]);
    input.cast = to_input_cast(items[3].cast<std::string>());
    result.push_back(std::move(input));
  }
  TSCOPE_CHECK(result.size() == inputs.size(), "function: one input spec per input");
  for (std::size_t i = 0; i < inputs.size(); ++i) result[i].dtype = inputs[i].dtype();
  return result;
}

// Theano's on_unused_input: an input that neither an output nor an update reads is an error
// ('raise'), a warning ('warn') or accepted ('ignore').
void check_unused_inputs(const std::vector<Variable>& inputs,
                         const std::vector<Variable>& outputs,
                         const std::vector<Update>& updates,
                         const std::string& policy) {
  if (policy == "ignore") return;
  if (policy != "raise" && policy != "warn") {
    throw_error(ErrorKind::InvalidArgument,
                "function: on_unused_input is '{}'; expected 'raise', 'warn' or 'ignore'", policy);
  }
  std::vector<Variable> roots = outputs;
  for (const Update& update : updates) roots.push_back(update.new_value);
  std::unordered_set<const VariableNode*> read;
  for (const Variable& root : roots) read.insert(root.node());
  for (const ApplyNode* node : ancestors_in_topological_order(roots)) {
    for (const Variable& input : node->inputs()) read.insert(input.node());
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (read.count(inputs[i].node()) != 0) continue;
    const std::string message = fmt::format(
        "function: input {} ('{}') is not part of the graph that computes the outputs and "
        "updates; pass on_unused_input='warn' or 'ignore' to allow it",
        i, inputs[i].name().empty() ? inputs[i].to_string() : inputs[i].name());
    if (policy == "raise") throw Error(ErrorKind::InvalidArgument, message);
    if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw py::error_already_set();
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
         bool global_profile, const py::dict& options, const py::iterable& default_updates,
         const py::iterable& input_specs) {
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
        std::vector<InputSpec> specs = to_input_specs(inputs, input_specs);
        DType float_x = DType::Float64;
        std::string on_unused_input = "raise";
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
          } else if (option == "float_x") {
            float_x = *dtype_from_object(value);
          } else if (option == "on_unused_input") {
            on_unused_input = value.cast<std::string>();
          } else {
            throw_error(ErrorKind::InvalidArgument, "function: unknown option '{}'", option);
          }
        }
        check_unused_inputs(inputs, output_variables, update_list, on_unused_input);
        PythonFunction result{function(inputs, output_variables, update_list, function_options),
                              std::move(specs), float_x, single_output};
        // TSCOPE_FLAGS=profile=true registers every profiled function already; ts.config.profile
        // set from Python does it here.
        if (global_profile && !profile::process_flags().profile && result.function.collector()) {
          profile::GlobalProfiles::instance().add(result.function.collector());
        }
        return result;
      },
      py::arg("inputs"), py::arg("outputs"), py::arg("single_output"), py::arg("updates"),
      py::arg("givens"), py::arg("name"), py::arg("collector"), py::arg("profile"),
      py::arg("global_profile"), py::arg("options"), py::arg("default_updates"),
      py::arg("input_specs"));
}

}  // namespace tscope::python
