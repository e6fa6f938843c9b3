// SPDX-License-Identifier: Apache-2.0
#include "python_site.h"

#include <Python.h>
#include <frameobject.h>

#include <pybind11/pybind11.h>

namespace tscope::python {
namespace {

// Written once at import, under the GIL, and read only under the GIL.
std::string* package_dir = new std::string();

bool inside_package(const std::string& file) {
  return !package_dir->empty() && file.compare(0, package_dir->size(), *package_dir) == 0;
}

std::string file_of(PyFrameObject* frame) {
  PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
  const char* name = PyUnicode_AsUTF8(code->co_filename);
  std::string file = name != nullptr ? name : "";
  if (name == nullptr) PyErr_Clear();
  Py_DECREF(code);
  return file;
}

}  // namespace

void set_package_dir(std::string directory) {
  if (!directory.empty() && directory.back() != '/') directory.push_back('/');
  *package_dir = std::move(directory);
}

SourceSite python_caller_site() {
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  SourceSite site;
  while (frame != nullptr) {
    std::string file = file_of(frame);
    if (!inside_package(file)) {
      site.file = std::move(file);
      site.line = static_cast<std::uint32_t>(PyFrame_GetLineNumber(frame));
      PyCodeObject* code = PyFrame_GetCode(frame);
      const char* function = PyUnicode_AsUTF8(code->co_name);
      if (function != nullptr) site.function = function; else PyErr_Clear();
      Py_DECREF(code);
      Py_DECREF(frame);
      return site;
    }
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  return site;
}

Variable at_python_site(Variable variable) {
  variable.node()->provenance.site = python_caller_site();
  return variable;
}

PythonSite::PythonSite(std::string user_op)
    : scope_(Provenance{python_caller_site(), std::move(user_op)}, /*forced=*/false) {}

}  // namespace tscope::python
