// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Python values as graph operands: Variables pass through, numbers follow the engine's Operand
/// rule (a constant of the other operand's dtype), arrays and lists become constants. Also the
/// parsing of axis lists and index keys shared by the Variable methods and the module functions.
#include <pybind11/pybind11.h>

#include <optional>
#include <source_location>
#include <vector>

#include "tscope/ops/elementwise.h"
#include "tscope/ops/indexing.h"

namespace tscope::python {
namespace py = pybind11;

/// A Variable for any operand: a Variable itself; a Python bool, int or float as a bool, int64
/// or float64 constant; anything NumPy can convert as a constant array.
[[nodiscard]] Variable to_variable(const py::handle& value);

/// The engine operands of a binary expression. A Python number becomes a number operand (a
/// constant of the other side's dtype), except a float next to an integer Variable, which stays
/// float64 so that `i * 0.5` is not truncated.
[[nodiscard]] std::pair<Operand, Operand> to_operands(const py::handle& a, const py::handle& b);

/// `axis` as Theano takes it: None (every axis, an empty list), an int, or a sequence of ints.
[[nodiscard]] std::vector<std::int64_t> to_axes(const py::handle& axis);

/// A reshape or zeros target: a sequence of ints, Variables or both, or an int64 vector Variable.
/// Static targets give `static_shape`; otherwise `symbolic` is an int64 vector.
struct ShapeArg {
  std::optional<std::vector<std::int64_t>> static_shape;
  Variable symbolic;
};
[[nodiscard]] ShapeArg to_shape(const py::handle& shape);

/// A NumPy-style index key for `x`: a boolean mask (a bool Variable or array) becomes the integer
/// arrays of its mask_coordinates() on the axes it covers, and None (numpy.newaxis) entries are
/// left out of `entries` and listed in `new_axes`.
struct IndexKey {
  IndexList entries;
  bool advanced = false;      ///< an integer array among the entries
  std::vector<int> new_axes;  ///< result axes that None adds (extent 1), ascending
  Variable mask;              ///< the key's boolean mask, if it has one
  int mask_axis = 0;          ///< the first axis of x the mask covers
};
[[nodiscard]] IndexKey to_index(const py::handle& key, const Variable& x);
/// x indexed by `index` (basic or advanced), with the new axes of its None entries.
[[nodiscard]] Variable apply_index(const Variable& x, const IndexKey& index);

/// sum and mean as plain functions (their default source location made explicit), so that the
/// module functions and the Variable methods can take them as template arguments.
[[nodiscard]] Variable sum_of(const Variable& x,
                              const std::vector<std::int64_t>& axes,
                              bool keepdims,
                              const std::source_location& location);
[[nodiscard]] Variable mean_of(const Variable& x,
                               const std::vector<std::int64_t>& axes,
                               bool keepdims,
                               const std::source_location& location);

}  // namespace tscope::python
