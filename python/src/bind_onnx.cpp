// SPDX-License-Identifier: Apache-2.0
// ONNX import (tensorscope.onnx): the model becomes an ordinary graph whose nodes name the model
// file and node, which tensorscope.onnx.load compiles like any other function.
#include <pybind11/stl.h>

#include "binding.h"
#include "numpy_tensor.h"
#include "tscope/onnx/import.h"

namespace tscope::python {
namespace {

py::list named(const std::vector<onnx::NamedVariable>& values) {
  py::list result;
  for (const onnx::NamedVariable& value : values) {
    result.append(py::make_tuple(value.name, value.variable));
  }
  return result;
}

}  // namespace

void bind_onnx(py::module_& module) {
  module.def("import_onnx", [](const std::string& path,
                               const std::map<std::string, std::vector<std::int64_t>>& input_dims,
                               bool initializers_as_constants) {
    onnx::ImportOptions options;
    for (const auto& [name, dims] : input_dims) {
      Dims extents;
      for (const std::int64_t dim : dims) extents.push_back(dim < 0 ? kUnknownDim : dim);
      options.input_dims.emplace(name, extents);
    }
    options.initializers_as_constants = initializers_as_constants;
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
    return result;
  }, py::arg("path"), py::arg("input_dims"), py::arg("initializers_as_constants"));
  module.def("read_onnx_tensor", [](const std::string& path) {
    return array_from_tensor(onnx::read_tensor_file(path));
  }, "A serialized TensorProto file (.pb, ONNX's test data) as an array.");
}

}  // namespace tscope::python
