// SPDX-License-Identifier: Apache-2.0
// ONNX import (tensorscope.onnx): the model becomes an ordinary graph whose nodes name the model
// file and node, which tensorscope.onnx.load compiles like any other function; a trainable
// import gives its weights as shared variables to differentiate, and its trained weights are
// written back into a copy of the file.
#include <pybind11/stl.h>

#include "binding.h"
#include "numpy_tensor.h"
#include "tscope/onnx/import.h"
#include "tscope/onnx/trained_model.h"

namespace tscope::python {
namespace {

py::list named(const std::vector<onnx::NamedVariable>& values) {
  py::list result;
  for (const onnx::NamedVariable& value : values) {
    result.append(py::make_tuple(value.name, value.variable));
  }
  return result;
}

py::list update_pairs(const std::vector<Update>& updates) {
  py::list result;
  for (const Update& update : updates) {
    result.append(py::make_tuple(update.shared, update.new_value));
  }
  return result;
}

}  // namespace

void bind_onnx(py::module_& module) {
  module.def("import_onnx", [](const std::string& path,
                               const std::map<std::string, std::vector<std::int64_t>>& input_dims,
                               bool initializers_as_constants, bool trainable,
                               std::uint64_t random_seed) {
    onnx::ImportOptions options;
    for (const auto& [name, dims] : input_dims) {
      Dims extents;
      for (const std::int64_t dim : dims) extents.push_back(dim < 0 ? kUnknownDim : dim);
      options.input_dims.emplace(name, extents);
    }
    options.initializers_as_constants = initializers_as_constants;
    options.trainable = trainable;
    options.random_seed = random_seed;
    onnx::ImportedModel model;
    {
      py::gil_scoped_release no_gil;
      model = onnx::import_model(path, options);
    }
    py::dict result;
    result["source"] = model.source;
    result["opset"] = model.opset;
    result["producer"] = model.producer;
    result["node_count"] = model.node_count;
    result["inputs"] = named(model.inputs);
    result["outputs"] = named(model.outputs);
    result["initializers"] = named(model.initializers);
    result["parameters"] = named(model.parameters);
    result["updates"] = update_pairs(model.updates);
    return result;
  }, py::arg("path"), py::arg("input_dims"), py::arg("initializers_as_constants"),
     py::arg("trainable"), py::arg("random_seed"));
  using NamedValues = std::vector<std::pair<std::string, Variable>>;
  module.def("write_trained_onnx", [](const std::string& source, const NamedValues& initializers,
                                      const std::string& destination) {
    onnx::ImportedModel model;
    model.source = source;
    for (const auto& [name, variable] : initializers) {
      model.initializers.push_back({name, variable});
    }
    py::gil_scoped_release no_gil;
    onnx::write_trained_model(model, destination);
  }, py::arg("source"), py::arg("initializers"), py::arg("destination"),
     "Writes `source` with the current values of its shared initializers to `destination`.");
  module.def("read_onnx_tensor", [](const std::string& path) {
    return array_from_tensor(onnx::read_tensor_file(path));
  }, "A serialized TensorProto file (.pb, ONNX's test data) as an array.");
}

}  // namespace tscope::python
