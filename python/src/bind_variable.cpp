// SPDX-License-Identifier: Apache-2.0
// The Variable class as Python sees it: Theano's TensorVariable attributes and operators. Every
// method that builds nodes opens a PythonSite, so the nodes point at the user's line.
#include <pybind11/stl.h>

#include "binding.h"
#include "numpy_tensor.h"
#include "operands.h"
#include "python_site.h"
#include "tscope/graph/apply.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/shape.h"

namespace tscope::python {
namespace {

using Binary = Variable (*)(const Operand&, const Operand&, const std::source_location&);

// A binary operator method; `reflected` swaps the operands (__radd__ and friends).
template <Binary builder>
auto binary(const char* user_op, bool reflected) {
  return [user_op, reflected](const py::object& self, const py::object& other) {
    PythonSite site(user_op);
    auto [a, b] = reflected ? to_operands(other, self) : to_operands(self, other);
    return builder(a, b, std::source_location::current());
  };
}

template <Binary builder>
void def_binary(py::class_<Variable>& cls, const char* name, const char* reflected_name,
                const char* user_op) {
  cls.def(name, binary<builder>(user_op, false), py::is_operator());
  if (reflected_name != nullptr) {
    cls.def(reflected_name, binary<builder>(user_op, true), py::is_operator());
  }
}

Variable matmul(const py::object& a, const py::object& b) {
  PythonSite site("dot");
  return dot(to_variable(a), to_variable(b));
}

// x[key]; the result remembers (x, key), so that T.set_subtensor(x[key], y) and
// T.inc_subtensor(x[key], y) can write through the same index, as in Theano.
py::object getitem(const py::object& self, const py::object& key) {
  PythonSite site("getitem");
  const auto& x = self.cast<const Variable&>();
  py::object result = py::cast(apply_index(x, to_index(key, x)));
  result.attr("_tscope_index") = py::make_tuple(self, key);
  return result;
}

std::vector<std::int64_t> dimshuffle_pattern(const py::args& args) {
  py::sequence items = args;
  if (args.size() == 1 && !py::isinstance<py::int_>(args[0]) && !py::isinstance<py::str>(args[0])) {
    items = args[0].cast<py::sequence>();
  }
  std::vector<std::int64_t> pattern;
  for (const py::handle item : items) {
    if (py::isinstance<py::str>(item)) {
      if (item.cast<std::string>() != "x") {
        throw_error(ErrorKind::InvalidArgument,
                    "dimshuffle: pattern entries are axis numbers or 'x', got '{}'",
                    item.cast<std::string>());
      }
      pattern.push_back(kNewAxis);
    } else {
      pattern.push_back(item.cast<std::int64_t>());
    }
  }
  return pattern;
}

Variable reshape_to(const Variable& x, const py::object& shape) {
  PythonSite site("reshape");
  const ShapeArg target = to_shape(shape);
  return target.static_shape ? reshape(x, *target.static_shape) : reshape(x, target.symbolic);
}

using Reduction = Variable (*)(const Variable&, const std::vector<std::int64_t>&, bool,
                               const std::source_location&);

template <Reduction builder>
auto reduction(const char* user_op) {
  return [user_op](const Variable& x, const py::object& axis, bool keepdims) {
    PythonSite site(user_op);
    return builder(x, to_axes(axis), keepdims, std::source_location::current());
  };
}


}  // namespace

void bind_variable(py::module_& module) {
  py::class_<Variable> cls(module, "Variable", py::dynamic_attr(),
                           "A symbolic value of a graph (Theano's TensorVariable).");
  cls.def_property(
         "name", [](const Variable& v) -> py::object {
           if (v.name().empty()) return py::none();
           return py::str(v.name());
         },
         [](const Variable& v, const std::string& name) { v.node()->name = name; })
      .def_property_readonly("dtype", [](const Variable& v) { return std::string(dtype_name(v.dtype())); })
      .def_property_readonly("ndim", &Variable::rank)
      .def_property_readonly("type", [](const Variable& v) { return v.type().to_string(); })
      .def_property_readonly("broadcastable",
                             [](const Variable& v) {
                               py::list flags;
                               for (const std::int64_t dim : v.type().dims) flags.append(dim == 1);
                               return py::tuple(flags);
                             })
      .def_property_readonly("static_shape",
                             [](const Variable& v) {
                               py::list dims;
                               for (const std::int64_t dim : v.type().dims) {
                                 dims.append(dim == kUnknownDim ? py::object(py::none())
                                                                : py::object(py::int_(dim)));
                               }
                               return py::tuple(dims);
                             },
                             "The static extents, None where known only at call time.")
      .def_property_readonly("shape",
                             [](const Variable& v) {
                               PythonSite site("shape");
                               return shape(v);
                             })
      .def_property_readonly("T",
                             [](const Variable& v) {
                               PythonSite site("transpose");
                               return transpose(v);
                             })
      .def_property_readonly("kind",
                             [](const Variable& v) {
                               switch (v.kind()) {
                                 case VariableKind::Input: return "input";
                                 case VariableKind::Constant: return "constant";
                                 case VariableKind::Shared: return "shared";
                                 case VariableKind::Output: break;
                               }
                               return "output";
                             })
      .def_property_readonly("creation_site",
                             [](const Variable& v) -> std::string {
                               if (v.owner() != nullptr) return v.owner()->provenance().site.short_string();
                               return v.node()->provenance.site.short_string();
                             },
                             "'file.py:line' where the node that computes this value was built.")
      .def_property_readonly("user_op",
                             [](const Variable& v) -> std::string {
                               if (v.owner() != nullptr) return v.owner()->provenance().user_op;
                               return v.node()->provenance.user_op;
                             })
      .def("__repr__", [](const Variable& v) { return v.to_string(); })
      .def("__str__", [](const Variable& v) { return v.to_string(); })
      // Identity, as in Theano: == compares nodes (use T.eq for the elementwise comparison), so
      // Variables work as dict keys (updates, givens).
      .def("__eq__", [](const Variable& a, const py::object& b) {
        return py::isinstance<Variable>(b) && a == b.cast<const Variable&>();
      })
      .def("__ne__", [](const Variable& a, const py::object& b) {
        return !(py::isinstance<Variable>(b) && a == b.cast<const Variable&>());
      })
      .def("__hash__", [](const Variable& v) { return VariableHash{}(v); })
      .def("__bool__", [](const Variable& v) -> bool {
        throw_error(ErrorKind::TypeMismatch,
                    "'{}' is symbolic: it has no truth value; use T.switch or compute it",
                    v.to_string());
      })
      .def("__len__", [](const Variable& v) -> std::size_t {
        throw_error(ErrorKind::TypeMismatch,
                    "'{}' is symbolic: its length is known only at call time; use x.shape[0]",
                    v.to_string());
      })
      .def("__iter__", [](const Variable& v) -> py::object {
        throw_error(ErrorKind::TypeMismatch, "'{}' is symbolic and cannot be iterated",
                    v.to_string());
      });

  def_binary<add>(cls, "__add__", "__radd__", "add");
  def_binary<sub>(cls, "__sub__", "__rsub__", "sub");
  def_binary<mul>(cls, "__mul__", "__rmul__", "mul");
  def_binary<true_div>(cls, "__truediv__", "__rtruediv__", "true_div");
  def_binary<int_div>(cls, "__floordiv__", "__rfloordiv__", "int_div");
  def_binary<mod>(cls, "__mod__", "__rmod__", "mod");
  def_binary<pow>(cls, "__pow__", "__rpow__", "pow");
  def_binary<lt>(cls, "__lt__", nullptr, "lt");
  def_binary<le>(cls, "__le__", nullptr, "le");
  def_binary<gt>(cls, "__gt__", nullptr, "gt");
  def_binary<ge>(cls, "__ge__", nullptr, "ge");
  def_binary<logical_and>(cls, "__and__", "__rand__", "and");
  def_binary<logical_or>(cls, "__or__", "__ror__", "or");
  def_binary<logical_xor>(cls, "__xor__", "__rxor__", "xor");
  cls.def("__matmul__", &matmul, py::is_operator())
      .def("__rmatmul__", [](const py::object& self, const py::object& other) {
        return matmul(other, self);
      }, py::is_operator())
      .def("__neg__", [](const Variable& x) { PythonSite site("neg"); return neg(x); })
      .def("__abs__", [](const Variable& x) { PythonSite site("abs"); return abs(x); })
      .def("__invert__", [](const Variable& x) { PythonSite site("not"); return logical_not(x); })
      .def("__getitem__", &getitem)
      .def("nonzero", [](const Variable& x, bool return_matrix) -> py::object {
        PythonSite site("nonzero");
        const Variable coordinates = nonzero(x);
        if (return_matrix) return py::cast(coordinates);
        py::tuple rows(x.rank());
        for (int axis = 0; axis < x.rank(); ++axis) rows[axis] = subtensor(coordinates, {axis});
        return rows;
      }, py::arg("return_matrix") = false,
         "The coordinates of the nonzero elements: one int64 vector per axis (Theano's "
         "x.nonzero()), or the (ndim, n) matrix with return_matrix=True.")
      .def("dot", [](const py::object& self, const py::object& other) { return matmul(self, other); })
      .def("reshape", [](const Variable& x, const py::args& shape, const py::kwargs& kwargs) {
        // x.reshape((a, b)), x.reshape(a, b) and Theano's x.reshape(shape, ndim=...); the
        // target's length gives ndim.
        for (const auto& [key, value] : kwargs) {
          if (key.cast<std::string>() != "ndim") {
            throw_error(ErrorKind::InvalidArgument, "reshape: unexpected argument '{}'",
                        key.cast<std::string>());
          }
        }
        if (shape.size() == 1) return reshape_to(x, shape[0]);
        return reshape_to(x, shape);
      })
      .def("flatten", [](const Variable& x, int ndim) {
        PythonSite site("flatten");
        return flatten(x, ndim);
      }, py::arg("ndim") = 1)
      .def("dimshuffle", [](const Variable& x, const py::args& pattern) {
        PythonSite site("dimshuffle");
        return dimshuffle(x, dimshuffle_pattern(pattern));
      })
      .def("transpose", [](const Variable& x, const py::args& axes) {
        PythonSite site("transpose");
        if (axes.size() == 0) return transpose(x);
        return dimshuffle(x, dimshuffle_pattern(axes));
      })
      .def("astype", [](const Variable& x, const py::object& dtype) {
        PythonSite site("cast");
        return cast(x, *dtype_from_object(dtype));
      })
      .def("clip", [](const py::object& x, const py::object& low, const py::object& high) {
        PythonSite site("clip");
        const Variable value = to_variable(x);
        auto [low_operand, unused_low] = to_operands(low, x);
        auto [high_operand, unused_high] = to_operands(high, x);
        return clip(value, low_operand, high_operand);
      })
      .def("sum", reduction<&sum_of>("sum"), py::arg("axis") = py::none(), py::arg("keepdims") = false)
      .def("mean", reduction<&mean_of>("mean"), py::arg("axis") = py::none(), py::arg("keepdims") = false)
      .def("max", reduction<&max>("max"), py::arg("axis") = py::none(), py::arg("keepdims") = false)
      .def("min", reduction<&min>("min"), py::arg("axis") = py::none(), py::arg("keepdims") = false)
      .def("prod", reduction<&prod>("prod"), py::arg("axis") = py::none(), py::arg("keepdims") = false)
      .def("any", reduction<&any>("any"), py::arg("axis") = py::none(), py::arg("keepdims") = false)
      .def("all", reduction<&all>("all"), py::arg("axis") = py::none(), py::arg("keepdims") = false)
      .def("var", reduction<&var>("var"), py::arg("axis") = py::none(), py::arg("keepdims") = false)
      .def("std", reduction<&stddev>("std"), py::arg("axis") = py::none(), py::arg("keepdims") = false)
      .def("argmax", reduction<&argmax>("argmax"), py::arg("axis") = py::none(), py::arg("keepdims") = false)
      .def("argmin", reduction<&argmin>("argmin"), py::arg("axis") = py::none(), py::arg("keepdims") = false)
      .def("get_value", [](const Variable& v, bool borrow) {
        Tensor tensor;
        {
          // A call on another thread may hold the shared-values lock while it runs.
          py::gil_scoped_release no_gil;
          tensor = v.get_value();
        }
        release_pending_arrays();
        py::array value = array_from_tensor(std::move(tensor));
        if (borrow) return value;
        return py::array(value.attr("copy")());
      }, py::arg("borrow") = false, "The value of a shared variable (a copy unless borrow=True).")
      .def("set_value", [](const Variable& v, const py::object& value, bool borrow) {
        // The engine's type check names the variable; a copy unless borrow=True, so that later
        // writes to the caller's array do not change the shared value.
        Tensor tensor = tensor_from_object(value, v.dtype());
        if (!borrow) tensor = tensor.clone();
        {
          py::gil_scoped_release no_gil;
          v.set_value(tensor);
          tensor = Tensor();
        }
        release_pending_arrays();
      }, py::arg("value"), py::arg("borrow") = false);
}

}  // namespace tscope::python
