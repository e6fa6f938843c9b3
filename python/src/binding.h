// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The pieces of the `tensorscope._core` extension, one per file, registered by module.cpp.
#include <pybind11/pybind11.h>

namespace tscope::python {
namespace py = pybind11;

/// ts.TensorscopeError and its subclasses, one per ErrorKind, and the translator that raises them
/// for a tscope::Error.
void bind_errors(py::module_& module);
/// The Variable class: attributes, Python operators, indexing.
void bind_variable(py::module_& module);
/// Graph constructors, op builders, grad and random streams.
void bind_ops(py::module_& module);
/// Convolution, pooling and batch normalisation.
void bind_nnet(py::module_& module);
/// Random streams.
void bind_random(py::module_& module);
/// function(), the compiled Function and shared variables' values.
void bind_function(py::module_& module);
/// scan, the loop builder.
void bind_loop(py::module_& module);
/// ONNX import.
void bind_onnx(py::module_& module);
/// Profile objects, flags and the process-wide profile list.
void bind_profile(py::module_& module);

}  // namespace tscope::python
