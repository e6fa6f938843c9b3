// SPDX-License-Identifier: Apache-2.0
#include "operands.h"

#include <pybind11/stl.h>

#include <algorithm>

#include "numpy_tensor.h"
#include "python_site.h"
#include "tscope/core/error.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/indexing.h"
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

namespace {

// One entry of a key as written, before masks become integer arrays.
struct KeyItem {
  enum class Kind { Ellipsis, NewAxis, Slice, Integer, Array, Mask } kind;
  py::handle handle;
  Variable variable;  // Integer (when a Variable), Array and Mask
};

KeyItem classify(const py::handle& item) {
  using Kind = KeyItem::Kind;
  if (item.is(py::ellipsis())) return {Kind::Ellipsis, item, Variable()};
  if (item.is_none()) return {Kind::NewAxis, item, Variable()};
  if (py::isinstance<py::slice>(item)) return {Kind::Slice, item, Variable()};
  if (py::isinstance<py::bool_>(item)) {
    throw_error(ErrorKind::Unsupported,
                "index: a Python bool as an index is not supported; use a boolean array");
  }
  if (py::isinstance<py::int_>(item)) return {Kind::Integer, item, Variable()};
  // A Variable, or an array (a list of ints or bools) made a constant.
  const Variable variable =
      py::isinstance<Variable>(item) ? item.cast<Variable>() : to_variable(item);
  if (variable.dtype() == DType::Bool) {
    if (variable.rank() == 0) {
      throw_error(ErrorKind::Unsupported,
                  "index: a boolean scalar as an index is not supported; use a boolean array");
    }
    return {Kind::Mask, item, variable};
  }
  return {variable.rank() > 0 ? Kind::Array : Kind::Integer, item, variable};
}

// How many axes of x an item covers.
int axes_covered(const KeyItem& item) {
  switch (item.kind) {
    case KeyItem::Kind::Ellipsis:
    case KeyItem::Kind::NewAxis:
      return 0;
    case KeyItem::Kind::Mask:
      return item.variable.rank();
    default:
      return 1;
  }
}

}  // namespace

IndexKey to_index(const py::handle& key, const Variable& x) {
  using Kind = KeyItem::Kind;
  std::vector<KeyItem> items;
  if (py::isinstance<py::tuple>(key)) {
    for (const py::handle item : key.cast<py::tuple>()) items.push_back(classify(item));
  } else {
    items.push_back(classify(key));
  }
  int ellipsis_count = 0;
  int covered = 0;
  int masks = 0;
  for (const KeyItem& item : items) {
    ellipsis_count += item.kind == Kind::Ellipsis ? 1 : 0;
    masks += item.kind == Kind::Mask ? 1 : 0;
    covered += axes_covered(item);
  }
  if (ellipsis_count > 1) {
    throw_error(ErrorKind::InvalidArgument, "index: an index can only have one Ellipsis (...)");
  }
  if (masks > 1) {
    throw_error(ErrorKind::Unsupported, "index: only one boolean mask per index is supported");
  }
  IndexKey index;
  // The result's axes, walked as NumPy lays them out: each slice keeps an axis, None adds one, and
  // the integer arrays (with masks) together put their broadcast shape where the first of them
  // stands. `array_rank` is that shape's rank; None's positions are fixed once it is known.
  int array_rank = 0;
  for (const KeyItem& item : items) {
    if (item.kind == Kind::Array) array_rank = std::max(array_rank, item.variable.rank());
    if (item.kind == Kind::Mask) array_rank = std::max(array_rank, 1);
  }
  int axis = 0;
  int result_axis = 0;
  bool arrays_placed = false;
  bool after_arrays = false;  // a slice or None has followed the arrays
  for (const KeyItem& item : items) {
    switch (item.kind) {
      case Kind::Ellipsis:
        for (int i = covered; i < x.rank(); ++i) {
          index.entries.emplace_back(slice());
          ++axis;
          ++result_axis;
        }
        after_arrays = arrays_placed;
        break;
      case Kind::NewAxis:
        index.new_axes.push_back(result_axis++);
        after_arrays = arrays_placed;
        break;
      case Kind::Slice:
        index.entries.emplace_back(slice(to_bound(item.handle.attr("start")),
                                         to_bound(item.handle.attr("stop")),
                                         to_bound(item.handle.attr("step"))));
        ++axis;
        ++result_axis;
        after_arrays = arrays_placed;
        break;
      case Kind::Integer:
        if (item.variable.defined()) {
          index.entries.emplace_back(item.variable);
        } else {
          index.entries.emplace_back(item.handle.cast<std::int64_t>());
        }
        ++axis;
        break;
      case Kind::Array:
      case Kind::Mask:
        if (arrays_placed && after_arrays && !index.new_axes.empty()) {
          throw_error(ErrorKind::Unsupported,
                      "index: None between integer arrays or masks (where NumPy moves the "
                      "indexed axes to the front) is not supported");
        }
        if (!arrays_placed) result_axis += array_rank;
        arrays_placed = true;
        index.advanced = true;
        if (item.kind == Kind::Array) {
          index.entries.emplace_back(item.variable);
          ++axis;
        } else {
          index.mask = item.variable;
          index.mask_axis = axis;
          for (const Variable& row : mask_coordinates(x, axis, item.variable)) {
            index.entries.emplace_back(row);
          }
          axis += item.variable.rank();
        }
        break;
    }
  }
  return index;
}

Variable apply_index(const Variable& x, const IndexKey& index) {
  Variable result = x;
  if (!index.advanced && !index.entries.empty()) {
    result = subtensor(x, index.entries);
  } else if (index.advanced && index.entries.size() == 1 && !index.entries[0].is_slice() &&
             index.entries[0].as_integer().variable().rank() == 1) {
    result = advanced_subtensor1(x, index.entries[0].as_integer().variable());
  } else if (index.advanced) {
    result = advanced_subtensor(x, index.entries);
  }
  if (index.new_axes.empty()) return result;
  std::vector<std::int64_t> pattern;
  std::size_t next_new = 0;
  std::int64_t next_axis = 0;
  const auto rank = static_cast<int>(result.rank() + index.new_axes.size());
  for (int i = 0; i < rank; ++i) {
    if (next_new < index.new_axes.size() && index.new_axes[next_new] == i) {
      pattern.push_back(kNewAxis);
      ++next_new;
    } else {
      pattern.push_back(next_axis++);
    }
  }
  return dimshuffle(result, pattern);
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
