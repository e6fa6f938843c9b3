// SPDX-License-Identifier: Apache-2.0
// Graph constructors, op builders and grad, exposed one to one: the Python modules
// (tensorscope.tensor, tensorscope.tensor.nnet) give them Theano's names and signatures. Every
// builder runs inside a PythonSite, so its nodes point at the user's line.
#include <pybind11/stl.h>

#include "binding.h"
#include "numpy_tensor.h"
#include "operands.h"
#include "python_site.h"
#include "tscope/grad/grad.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/shape.h"

namespace tscope::python {
namespace {

using Unary = Variable (*)(const Variable&, const std::source_location&);
using Binary = Variable (*)(const Operand&, const Operand&, const std::source_location&);
using VariablePair = Variable (*)(const Variable&, const Variable&, const std::source_location&);
using Reduction = Variable (*)(const Variable&, const std::vector<std::int64_t>&, bool,
                               const std::source_location&);

template <Unary builder>
void def_unary(py::module_& module, const char* name) {
  module.def(name, [name](const py::object& x) {
    PythonSite site(name);
    return builder(to_variable(x), std::source_location::current());
  });
}

template <Binary builder>
void def_binary(py::module_& module, const char* name) {
  module.def(name, [name](const py::object& a, const py::object& b) {
    PythonSite site(name);
    auto [left, right] = to_operands(a, b);
    return builder(left, right, std::source_location::current());
  });
}

template <VariablePair builder>
void def_pair(py::module_& module, const char* name) {
  module.def(name, [name](const py::object& a, const py::object& b) {
    PythonSite site(name);
    return builder(to_variable(a), to_variable(b), std::source_location::current());
  });
}

template <Reduction builder>
void def_reduction(py::module_& module, const char* name) {
  module.def(name, [name](const py::object& x, const py::object& axis, bool keepdims) {
    PythonSite site(name);
    return builder(to_variable(x), to_axes(axis), keepdims, std::source_location::current());
  }, py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
}

Variable dot_of(const Variable& a, const Variable& b, const std::source_location& location) {
  return dot(a, b, location);
}
Variable shape_of(const Variable& x, const std::source_location& location) {
  return shape(x, location);
}

Dims to_dims(const std::vector<std::optional<std::int64_t>>& dims) {
  Dims result;
  for (const auto& dim : dims) result.push_back(dim.value_or(kUnknownDim));
  return result;
}

std::vector<Variable> to_variables(const py::iterable& values) {
  std::vector<Variable> variables;
  for (const py::handle value : values) variables.push_back(to_variable(value));
  return variables;
}

// The mask of `index` as a bool tensor of x's rank, extent 1 on the axes it does not cover.
Variable mask_over(const Variable& x, const IndexKey& index) {
  std::vector<std::int64_t> pattern;
  for (int axis = 0; axis < x.rank(); ++axis) {
    const int within = axis - index.mask_axis;
    pattern.push_back(within >= 0 && within < index.mask.rank() ? within : kNewAxis);
  }
  return dimshuffle(index.mask, pattern);
}

// Whether `index` is one boolean mask and whole-axis slices `:` only.
bool only_mask_and_full_slices(const IndexKey& index) {
  if (!index.mask.defined()) return false;
  int arrays = 0;
  for (const Index& entry : index.entries) {
    if (!entry.is_slice()) {
      ++arrays;
      continue;
    }
    const Slice& part = entry.as_slice();
    if (!part.start.is_omitted() || !part.stop.is_omitted() || !part.step.is_omitted()) {
      return false;
    }
  }
  return arrays == index.mask.rank();
}

Variable write_subtensor(const Variable& x, const py::object& key, const py::object& y,
                         bool increment) {
  PythonSite site(increment ? "inc_subtensor" : "set_subtensor");
  const IndexKey index = to_index(key, x);
  if (!index.new_axes.empty()) {
    throw_error(ErrorKind::Unsupported,
                "{}: None (numpy.newaxis) in the index of a write is not supported",
                increment ? "inc_subtensor" : "set_subtensor");
  }
  const Variable value = to_variable(y);
  if (!index.advanced) {
    return increment ? inc_subtensor(x, index.entries, value)
                     : set_subtensor(x, index.entries, value);
  }
  if (index.entries.size() == 1 && index.entries[0].as_integer().variable().rank() == 1) {
    const Variable& rows = index.entries[0].as_integer().variable();
    return increment ? advanced_inc_subtensor1(x, rows, value)
                     : advanced_set_subtensor1(x, rows, value);
  }
  if (increment) return advanced_inc_subtensor(x, index.entries, value);
  // A mask names each element once, so setting is adding into x with the masked elements zeroed.
  if (only_mask_and_full_slices(index)) {
    return advanced_inc_subtensor(switch_(mask_over(x, index), 0.0, x), index.entries, value);
  }
  throw_error(ErrorKind::Unsupported,
              "set_subtensor: setting through several integer arrays is not supported; use "
              "inc_subtensor, a single integer vector or a boolean mask");
}

}  // namespace

void bind_ops(py::module_& module) {
  module.def("input", [](const py::object& dtype, const std::vector<std::optional<std::int64_t>>& dims,
                         const std::string& name) {
    PythonSite site("input");
    return at_python_site(tensor(*dtype_from_object(dtype), to_dims(dims), name));
  }, py::arg("dtype"), py::arg("dims"), py::arg("name") = "",
     "A graph input of `dtype` whose extents are `dims` (None: known at call time).");
  module.def("constant", [](const py::object& value, const std::string& name,
                            const py::object& dtype) {
    PythonSite site("constant");
    return at_python_site(constant(tensor_copy_from_object(value, dtype_from_object(dtype)), name));
  }, py::arg("value"), py::arg("name") = "", py::arg("dtype") = py::none());
  module.def("shared", [](const py::object& value, const std::string& name, const py::object& dtype,
                          bool fixed_shape) {
    PythonSite site("shared");
    Tensor tensor = tensor_copy_from_object(value, dtype_from_object(dtype));
    return at_python_site(fixed_shape ? shared_fixed_shape(tensor, name) : shared(tensor, name));
  }, py::arg("value"), py::arg("name") = "", py::arg("dtype") = py::none(),
     py::arg("fixed_shape") = false);
  module.def("as_variable", [](const py::object& value) {
    PythonSite site("constant");
    return to_variable(value);
  });

  def_unary<neg>(module, "neg");
  def_unary<abs>(module, "abs");
  def_unary<sgn>(module, "sgn");
  def_unary<sqr>(module, "sqr");
  def_unary<sqrt>(module, "sqrt");
  def_unary<reciprocal>(module, "reciprocal");
  def_unary<exp>(module, "exp");
  def_unary<exp2>(module, "exp2");
  def_unary<expm1>(module, "expm1");
  def_unary<log>(module, "log");
  def_unary<log2>(module, "log2");
  def_unary<log10>(module, "log10");
  def_unary<log1p>(module, "log1p");
  def_unary<tanh>(module, "tanh");
  def_unary<sigmoid>(module, "sigmoid");
  def_unary<softplus>(module, "softplus");
  def_unary<sin>(module, "sin");
  def_unary<cos>(module, "cos");
  def_unary<erf>(module, "erf");
  def_unary<floor>(module, "floor");
  def_unary<ceil>(module, "ceil");
  def_unary<round>(module, "round");
  def_unary<relu>(module, "relu");
  def_unary<logical_not>(module, "logical_not");
  def_unary<softmax>(module, "softmax");
  def_unary<log_softmax>(module, "log_softmax");
  def_unary<transpose>(module, "transpose");
  def_unary<zeros_like>(module, "zeros_like");
  def_unary<ones_like>(module, "ones_like");
  def_unary<shape_of>(module, "shape");

  def_binary<add>(module, "add");
  def_binary<sub>(module, "sub");
  def_binary<mul>(module, "mul");
  def_binary<true_div>(module, "true_div");
  def_binary<int_div>(module, "int_div");
  def_binary<mod>(module, "mod");
  def_binary<pow>(module, "pow");
  def_binary<maximum>(module, "maximum");
  def_binary<minimum>(module, "minimum");
  def_binary<eq>(module, "eq");
  def_binary<neq>(module, "neq");
  def_binary<lt>(module, "lt");
  def_binary<gt>(module, "gt");
  def_binary<le>(module, "le");
  def_binary<ge>(module, "ge");
  def_binary<logical_and>(module, "logical_and");
  def_binary<logical_or>(module, "logical_or");
  def_binary<logical_xor>(module, "logical_xor");

  def_pair<dot_of>(module, "dot");
  def_pair<batched_dot>(module, "batched_dot");
  def_pair<categorical_crossentropy>(module, "categorical_crossentropy");
  def_pair<crossentropy_categorical_1hot>(module, "crossentropy_categorical_1hot");
  def_pair<softmax_cross_entropy>(module, "softmax_cross_entropy");
  def_pair<binary_crossentropy>(module, "binary_crossentropy");

  def_reduction<sum_of>(module, "sum");
  def_reduction<mean_of>(module, "mean");
  def_reduction<max>(module, "max");
  def_reduction<min>(module, "min");
  def_reduction<prod>(module, "prod");
  def_reduction<any>(module, "any");
  def_reduction<all>(module, "all");
  def_reduction<var>(module, "var");
  def_reduction<stddev>(module, "std");
  def_reduction<argmax>(module, "argmax");
  def_reduction<argmin>(module, "argmin");

  module.def("switch", [](const py::object& condition, const py::object& a, const py::object& b) {
    PythonSite site("switch");
    auto [left, right] = to_operands(a, b);
    return switch_(to_variable(condition), left, right);
  });
  module.def("clip", [](const py::object& x, const py::object& low, const py::object& high) {
    PythonSite site("clip");
    auto [low_operand, unused_low] = to_operands(low, x);
    auto [high_operand, unused_high] = to_operands(high, x);
    return clip(to_variable(x), low_operand, high_operand);
  });
  module.def("cast", [](const py::object& x, const py::object& dtype) {
    PythonSite site("cast");
    return cast(to_variable(x), *dtype_from_object(dtype));
  });
  module.def("join", [](std::int64_t axis, const py::iterable& tensors) {
    PythonSite site("join");
    return join(axis, to_variables(tensors));
  });
  module.def("stack", [](const py::iterable& tensors, std::int64_t axis) {
    PythonSite site("stack");
    return stack(to_variables(tensors), axis);
  }, py::arg("tensors"), py::arg("axis") = 0);
  module.def("reshape", [](const py::object& x, const py::object& shape) {
    PythonSite site("reshape");
    const ShapeArg target = to_shape(shape);
    return target.static_shape ? reshape(to_variable(x), *target.static_shape)
                               : reshape(to_variable(x), target.symbolic);
  });
  module.def("flatten", [](const py::object& x, int ndim) {
    PythonSite site("flatten");
    return flatten(to_variable(x), ndim);
  }, py::arg("x"), py::arg("ndim") = 1);
  module.def("alloc", [](const py::object& value, const py::object& shape, const py::object& dtype) {
    PythonSite site("alloc");
    std::vector<DimArg> dims;
    for (const py::handle extent : shape.cast<py::sequence>()) {
      if (py::isinstance<Variable>(extent)) {
        dims.emplace_back(extent.cast<Variable>());
      } else {
        dims.emplace_back(extent.cast<std::int64_t>());
      }
    }
    Variable filler = to_variable(value);
    if (const std::optional<DType> wanted = dtype_from_object(dtype)) filler = cast(filler, *wanted);
    return alloc(filler, dims);
  });
  module.def(
      "arange",
      [](const py::object& start, const py::object& stop, const py::object& step,
         const py::object& dtype) {
        PythonSite site("arange");
        return arange(to_variable(start), to_variable(stop), to_variable(step),
                      dtype_from_object(dtype));
      },
      py::arg("start"), py::arg("stop"), py::arg("step"), py::arg("dtype") = py::none());
  module.def("nonzero", [](const py::object& x) {
    PythonSite site("nonzero");
    return nonzero(to_variable(x));
  });
  module.def("set_subtensor", [](const Variable& x, const py::object& key, const py::object& y) {
    return write_subtensor(x, key, y, false);
  });
  module.def("inc_subtensor", [](const Variable& x, const py::object& key, const py::object& y) {
    return write_subtensor(x, key, y, true);
  });

  module.def("grad", [](const Variable& cost, const std::vector<Variable>& wrt,
                        const std::string& disconnected_inputs,
                        const std::vector<Variable>& consider_constant) {
    PythonSite site("grad");
    GradOptions options;
    options.consider_constant = consider_constant;
    if (disconnected_inputs == "ignore" || disconnected_inputs == "warn") {
      options.disconnected = DisconnectedPolicy::Zero;
    } else if (disconnected_inputs != "raise") {
      throw_error(ErrorKind::InvalidArgument,
                  "grad: disconnected_inputs is '{}'; expected 'raise', 'warn' or 'ignore'",
                  disconnected_inputs);
    }
    return grad(cost, wrt, options);
  }, py::arg("cost"), py::arg("wrt"), py::arg("disconnected_inputs") = "raise",
     py::arg("consider_constant") = std::vector<Variable>{});
}

}  // namespace tscope::python
