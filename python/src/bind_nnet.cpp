// SPDX-License-Identifier: Apache-2.0
// Convolution, pooling and batch normalisation builders. The Python side (tensorscope.tensor.nnet,
// tensorscope.tensor.signal.pool) turns Theano's arguments (border_mode, subsample, ws, mode, ...)
// into these explicit options.
#include <pybind11/stl.h>

#include "binding.h"
#include "operands.h"
#include "python_site.h"
#include "tscope/core/error.h"
#include "tscope/ops/conv.h"

namespace tscope::python {
namespace {

#include "tscope/ops/elementwise.h"
#include "tscope/ops/shape.h"
Padding to_padding(const std::string& mode, const std::vector<std::int64_t>& begin,
                   const std::vector<std::int64_t>& end) {
  if (mode == "same") return Padding::same();
  if (mode == "full") return Padding{Padding::Mode::Full, {}, {}};
  if (mode == "explicit") return Padding{Padding::Mode::Explicit, begin, end};
  throw_error(ErrorKind::InvalidArgument,
              "padding mode '{}' is unknown; expected 'explicit', 'same' or 'full'", mode);
}

}  // namespace

void bind_nnet(py::module_& module) {
  module.def("conv", [](const py::object& x, const py::object& w,
                        const std::vector<std::int64_t>& strides, const std::string& padding,
                        const std::vector<std::int64_t>& pad_begin,
                        const std::vector<std::int64_t>& pad_end,
                        const std::vector<std::int64_t>& dilations, std::int64_t groups) {
    PythonSite site("conv");
    ConvOptions options{strides, to_padding(padding, pad_begin, pad_end), dilations, groups};
    return conv(to_variable(x), to_variable(w), options);
  }, py::arg("x"), py::arg("w"), py::arg("strides"), py::arg("padding"), py::arg("pad_begin"),
     py::arg("pad_end"), py::arg("dilations"), py::arg("groups"));

  module.def(
      "pool",
      [](const py::object& x, const std::string& kind, const std::vector<std::int64_t>& kernel,
         const std::vector<std::int64_t>& strides, const std::vector<std::int64_t>& pad_begin,
         const std::vector<std::int64_t>& pad_end, bool include_pad, bool ceil_mode) {
        PythonSite site(kind == "max" ? "max_pool" : kind == "sum" ? "sum_pool" : "avg_pool");
        PoolOptions options{kernel, strides, Padding{Padding::Mode::Explicit, pad_begin, pad_end},
                            include_pad, ceil_mode};
        if (kind == "max") return max_pool(to_variable(x), options);
        if (kind == "average") return avg_pool(to_variable(x), options);
        if (kind == "sum") {
          // The average over the whole window, padding included, times its size: the window's sum.
          options.include_pad = true;
          double volume = 1;
          for (const std::int64_t extent : kernel) volume *= static_cast<double>(extent);
          return avg_pool(to_variable(x), options) * volume;
        }
        throw_error(ErrorKind::InvalidArgument,
                    "pool: kind '{}' is unknown; expected 'max', 'average' or 'sum'", kind);
      },
      py::arg("x"), py::arg("kind"), py::arg("kernel"), py::arg("strides"), py::arg("pad_begin"),
      py::arg("pad_end"), py::arg("include_pad"), py::arg("ceil_mode") = false);

  module.def("batch_norm_train", [](const py::object& x, const py::object& gamma,
                                    const py::object& beta, const py::object& running_mean,
                                    const py::object& running_var, double epsilon,
                                    double momentum) {
    PythonSite site("batch_norm");
    const BatchNormTraining result =
        batch_norm_train(to_variable(x), to_variable(gamma), to_variable(beta),
                         to_variable(running_mean), to_variable(running_var),
                         BatchNormOptions{epsilon, momentum});
    return py::make_tuple(result.y, result.batch_mean, result.batch_var, result.new_running_mean,
                          result.new_running_var);
  });

  module.def("batch_norm_inference", [](const py::object& x, const py::object& gamma,
                                        const py::object& beta, const py::object& mean,
                                        const py::object& var, double epsilon) {
    PythonSite site("batch_norm");
    return batch_norm_inference(to_variable(x), to_variable(gamma), to_variable(beta),
                                to_variable(mean), to_variable(var),
                                BatchNormOptions{epsilon, 0.1});
  });
}

}  // namespace tscope::python
