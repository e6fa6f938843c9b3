// SPDX-License-Identifier: Apache-2.0
// Random streams (Theano's RandomStreams): the engine's RandomStream, whose draws own shared state
// variables and whose sizes may be symbolic. tensorscope.function adds the state updates of the
// draws a function uses, as Theano's default updates did, so each call draws fresh samples.
#include <pybind11/stl.h>

#include "binding.h"
#include "numpy_tensor.h"
#include "operands.h"
#include "python_site.h"
#include "tscope/ops/random.h"

namespace tscope::python {
namespace {

// A draw's size: a tuple of ints (a static shape), or one with scalar Variables in it, or an
// integer vector Variable such as x.shape (a shape read when the function runs).
template <class Draw>
Variable draw_with_size(const py::object& size, Draw draw) {
  const ShapeArg shape = to_shape(size);
  if (!shape.static_shape) return draw(shape.symbolic);
  Dims dims;
  for (const std::int64_t extent : *shape.static_shape) dims.push_back(extent);
  return draw(dims);
}

}  // namespace

void bind_random(py::module_& module) {
  py::class_<RandomStream>(module, "RandomStream")
      .def(py::init<std::uint64_t>(), py::arg("seed"))
      .def("uniform", [](RandomStream& stream, const py::object& size, double low, double high,
                         const py::object& dtype) {
        PythonSite site("uniform");
        return draw_with_size(size, [&](const auto& shape) {
          return stream.uniform(low, high, shape, *dtype_from_object(dtype));
        });
      })
      .def("normal", [](RandomStream& stream, const py::object& size, double mean, double std,
                        const py::object& dtype) {
        PythonSite site("normal");
        return draw_with_size(size, [&](const auto& shape) {
          return stream.normal(mean, std, shape, *dtype_from_object(dtype));
        });
      })
      .def("integers", [](RandomStream& stream, const py::object& size, std::int64_t low,
                          std::int64_t high, const py::object& dtype) {
        PythonSite site("integers");
        return draw_with_size(size, [&](const auto& shape) {
          return stream.integers(low, high, shape, *dtype_from_object(dtype));
        });
      })
      .def("dropout", [](RandomStream& stream, const py::object& x, double p, bool training) {
        PythonSite site("dropout");
        return stream.dropout(to_variable(x), p, training);
      })
      .def("state_updates", [](const RandomStream& stream) {
        py::list pairs;
        for (const RandomStateUpdate& update : stream.state_updates()) {
          pairs.append(py::make_tuple(update.shared, update.new_value));
        }
        return pairs;
      })
      .def("reseed", &RandomStream::reseed);
}

}  // namespace tscope::python
