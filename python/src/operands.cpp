// SPDX-License-Identifier: Apache-2.0
#include "operands.h"

#include <pybind11/stl.h>

#include "numpy_tensor.h"
#include "python_site.h"
#include "tscope/core/error.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/shape.h"

namespace tscope::python {
namespace {

bool is_python_number(const py::handle& value) {
  return py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value);
}

Variable int64_constant(std::int64_t value) {
  return at_python_site(constant(Tensor::scalar(static_cast<double>(value), DType::Int64)));
}

IndexBound to_bound(const py::handle& value) {
  if (value.is_none()) return none;
  if (py::isinstance<Variable>(value)) return value.cast<Variable>();
  if (py::isinstance<py::bool_>(value) || !py::hasattr(value, "__index__")) {
    throw_error(ErrorKind::TypeMismatch,
                "index: a slice bound must be an int, an integer scalar Variable or None, got {}",
                py::str(py::type::of(value)).cast<std::string>());
  }
  return value.cast<std::int64_t>();
}

}  // namespace

Variable to_variable(const py::handle& value) {
  if (py::isinstance<Variable>(value)) return value.cast<Variable>();
  if (py::isinstance<py::bool_>(value)) {
    return at_python_site(constant(Tensor::scalar(value.cast<bool>() ? 1.0 : 0.0, DType::Bool)));
  }
  if (py::isinstance<py::int_>(value)) return int64_constant(value.cast<std::int64_t>());
  if (py::isinstance<py::float_>(value)) {
    return at_python_site(constant(Tensor::scalar(value.cast<double>(), DType::Float64)));
  }
  return at_python_site(constant(tensor_copy_from_object(value)));
}

std::pair<Operand, Operand> to_operands(const py::handle& a, const py::handle& b) {
  auto side = [](const py::handle& value, const py::handle& other) -> Operand {
    if (!is_python_number(value) || py::isinstance<py::bool_>(value)) return to_variable(value);
    const bool float_number = py::isinstance<py::float_>(value);
    if (py::isinstance<Variable>(other)) {
      const DType other_dtype = other.cast<const Variable&>().dtype();
      if (float_number && !is_floating(other_dtype)) return to_variable(value);
      return value.cast<double>();
    }
    return to_variable(value);
  };
  return {side(a, b), side(b, a)};
}

std::vector<std::int64_t> to_axes(const py::handle& axis) {
  if (axis.is_none()) return {};
  if (py::isinstance<py::int_>(axis)) return {axis.cast<std::int64_t>()};
  return axis.cast<std::vector<std::int64_t>>();
}

ShapeArg to_shape(const py::handle& shape) {
  if (py::isinstance<Variable>(shape)) return {std::nullopt, shape.cast<Variable>()};
  if (py::isinstance<py::int_>(shape)) {
    return {std::vector<std::int64_t>{shape.cast<std::int64_t>()}, Variable()};
  }
  const auto items = shape.cast<py::sequence>();
  bool all_static = true;
  for (const py::handle item : items) all_static = all_static && !py::isinstance<Variable>(item);
  if (all_static) return {shape.cast<std::vector<std::int64_t>>(), Variable()};
  std::vector<Variable> extents;
  for (const py::handle item : items) {
    extents.push_back(py::isinstance<Variable>(item)
                          ? tscope::cast(item.cast<Variable>(), DType::Int64)
                          : int64_constant(item.cast<std::int64_t>()));
  }
  return {std::nullopt, make_vector(extents)};
}

IndexKey to_index(const py::handle& key, int rank) {
  std::vector<py::handle> items;
  if (py::isinstance<py::tuple>(key)) {
    for (const py::handle item : key.cast<py::tuple>()) items.push_back(item);
  } else {
    items.push_back(key);
  }
  int ellipsis_count = 0;
  for (const py::handle item : items) {
    if (item.is(py::ellipsis())) ++ellipsis_count;
    if (item.is_none()) {
      throw_error(ErrorKind::Unsupported,
                  "index: None (numpy.newaxis) in an index is not supported; use "
                  "x.dimshuffle(...) to add an axis");
    }
  }
  if (ellipsis_count > 1) {
    throw_error(ErrorKind::InvalidArgument, "index: an index can only have one Ellipsis (...)");
  }
  IndexKey index;
  const int named = static_cast<int>(items.size()) - ellipsis_count;
  for (const py::handle item : items) {
    if (item.is(py::ellipsis())) {
      for (int axis = named; axis < rank; ++axis) index.entries.emplace_back(slice());
    } else if (py::isinstance<py::slice>(item)) {
      index.entries.emplace_back(slice(to_bound(item.attr("start")), to_bound(item.attr("stop")),
                                       to_bound(item.attr("step"))));
    } else if (py::isinstance<Variable>(item)) {
      const auto& variable = item.cast<const Variable&>();
      index.advanced = index.advanced || variable.rank() > 0;
      index.entries.emplace_back(variable);
    } else if (py::isinstance<py::int_>(item) && !py::isinstance<py::bool_>(item)) {
      index.entries.emplace_back(item.cast<std::int64_t>());
    } else {
      // An integer array (or a list of ints): advanced indexing with a constant index.
      const Variable array = to_variable(item);
      index.advanced = index.advanced || array.rank() > 0;
      index.entries.emplace_back(array);
    }
  }
  return index;
}

Variable sum_of(const Variable& x,
                const std::vector<std::int64_t>& axes,
                bool keepdims,
                const std::source_location& location) {
  return sum(x, axes, keepdims, location);
}
Variable mean_of(const Variable& x,
                 const std::vector<std::int64_t>& axes,
                 bool keepdims,
                 const std::source_location& location) {
  return mean(x, axes, keepdims, location);
}

}  // namespace tscope::python
