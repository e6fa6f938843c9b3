// SPDX-License-Identifier: Apache-2.0
// Python exceptions for tscope::Error: every kind has its own class deriving from
// ts.TensorscopeError and from the builtin exception a Python user would catch for it (a dtype
// mismatch is a TypeError, a bad shape a ValueError), so both `except ts.TensorscopeError` and
// `except TypeError` work. The message is the engine's what(): message and context chain.
#include <array>

#include "binding.h"
#include "tscope/core/error.h"

namespace tscope::python {
namespace {

struct ErrorClass {
  ErrorKind kind;
  const char* name;
  PyObject* builtin;  // the second base
};

constexpr int kKinds = static_cast<int>(ErrorKind::Internal) + 1;

// The classes live as long as the interpreter: module attributes hold them, and the translator
// only reads these pointers.
std::array<PyObject*, kKinds> error_classes{};
PyObject* base_class = nullptr;

std::array<ErrorClass, kKinds> error_table() {
  return {{
      {ErrorKind::InvalidArgument, "InvalidArgumentError", PyExc_ValueError},
      {ErrorKind::TypeMismatch, "TypeMismatchError", PyExc_TypeError},
      {ErrorKind::ShapeMismatch, "ShapeMismatchError", PyExc_ValueError},
      {ErrorKind::IndexOutOfRange, "IndexOutOfRangeError", PyExc_IndexError},
      {ErrorKind::Unsupported, "UnsupportedError", PyExc_NotImplementedError},
      {ErrorKind::NotDifferentiable, "NotDifferentiableError", PyExc_TypeError},
      {ErrorKind::BadFlag, "BadFlagError", PyExc_ValueError},
      {ErrorKind::Io, "IoError", PyExc_OSError},
      {ErrorKind::Parse, "ParseError", PyExc_ValueError},
      {ErrorKind::OutOfMemory, "OutOfMemoryError", PyExc_MemoryError},
      {ErrorKind::Internal, "InternalError", PyExc_RuntimeError},
  }};
}

void raise(const Error& error) {
  PyObject* type = error_classes[static_cast<int>(error.kind())];
  py::object instance = py::reinterpret_steal<py::object>(
      PyObject_CallFunction(type, "s", error.what()));
  if (!instance) return;  // the call set its own exception
  instance.attr("kind") = py::str(std::string(error_kind_name(error.kind())));
  instance.attr("message") = py::str(error.message());
  py::list context;
  for (const std::string& line : error.context()) context.append(line);
  instance.attr("context") = context;
  PyErr_SetObject(type, instance.ptr());
}

}  // namespace

void bind_errors(py::module_& module) {
  base_class = PyErr_NewExceptionWithDoc(
      "tensorscope.TensorscopeError",
      "An error reported by the Tensorscope engine. Attributes: kind (the engine's ErrorKind "
      "name), message (the short message) and context (the context chain, outermost first).",
      PyExc_Exception, nullptr);
  module.attr("TensorscopeError") = py::reinterpret_borrow<py::object>(base_class);
  for (const ErrorClass& entry : error_table()) {
    py::tuple bases = py::make_tuple(py::reinterpret_borrow<py::object>(base_class),
                                     py::reinterpret_borrow<py::object>(entry.builtin));
    const std::string qualified = std::string("tensorscope.") + entry.name;
    PyObject* cls = PyErr_NewException(qualified.c_str(), bases.ptr(), nullptr);
    if (cls == nullptr) throw py::error_already_set();
    error_classes[static_cast<int>(entry.kind)] = cls;
    module.attr(entry.name) = py::reinterpret_borrow<py::object>(cls);
  }
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer) std::rethrow_exception(pointer);
    } catch (const Error& error) {
      raise(error);
    }
  });
}

}  // namespace tscope::python
