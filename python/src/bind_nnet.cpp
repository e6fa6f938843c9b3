// SPDX-License-Identifier: Apache-2.0
// Convolution, pooling and batch normalisation builders. The Python side (tensorscope.tensor.nnet,
// tensorscope.tensor.signal.pool) turns Theano's arguments (border_mode, subsample, ws, mode, ...)
// into these explicit options. Batch normalisation over any axes is laid out here onto the
// engine's ops, which normalise over every axis but 1.
#include <pybind11/stl.h>

#include <algorithm>

#include "binding.h"
#include "operands.h"
#include "python_site.h"
#include "tscope/core/error.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/conv.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/shape.h"

namespace tscope::python {
namespace {

Padding to_padding(const std::string& mode, const std::vector<std::int64_t>& begin,
                   const std::vector<std::int64_t>& end) {
  if (mode == "same") return Padding::same();
  if (mode == "full") return Padding{Padding::Mode::Full, {}, {}};
  if (mode == "explicit") return Padding{Padding::Mode::Explicit, begin, end};
  throw_error(ErrorKind::InvalidArgument,
              "padding mode '{}' is unknown; expected 'explicit', 'same' or 'full'", mode);
}

// Batch normalisation over the axes `normalized` of x: the engine's ops see x as the matrix
// (normalised elements, kept elements), made by moving the normalised axes first and reshaping,
// so the kept axes together are its one channel axis. Parameters come in Theano's two forms:
// rank x.ndim with extent 1 on the normalised axes, or one axis per kept axis; both flatten to the
// channel vector, and per-channel results are given back in the parameters' form.
class NormalizedLayout {
 public:
  NormalizedLayout(const Variable& x, const std::vector<std::int64_t>& normalized)
      : x_(x), normalized_(normalized) {
    for (std::int64_t axis = 0; axis < x.rank(); ++axis) {
      if (std::find(normalized.begin(), normalized.end(), axis) == normalized.end()) {
        kept_.push_back(axis);
      }
    }
    // Theano's axes='spatial' is the engine's layout already.
    direct_ = x.rank() >= 2 && kept_ == std::vector<std::int64_t>{1};
  }

  /// x as the engine's ops take it.
  [[nodiscard]] Variable input() const {
    if (direct_) return x_;
    return reshape(moved(), std::vector<Variable>{product_of(normalized_), product_of(kept_)});
  }
  /// A parameter (gamma, beta, a mean or variance) as a channel vector.
  [[nodiscard]] Variable parameter(const Variable& p, const char* name) const {
    const auto rank = static_cast<std::int64_t>(p.rank());
    if (rank != x_.rank() && rank != static_cast<std::int64_t>(kept_.size())) {
      throw_error(ErrorKind::TypeMismatch,
                  "batch normalisation: {} is {}; expected rank {} (x's, with extent 1 on the "
                  "normalised axes) or {} (one axis per axis not normalised)",
                  name, p.type().to_string(), x_.rank(), kept_.size());
    }
    return rank == 1 ? p : reshape(p, std::vector<std::int64_t>{-1});
  }
  /// The engine's output for x, in x's layout.
  [[nodiscard]] Variable output(const Variable& y) const {
    if (direct_) return y;
    const Variable unflat = tscope::reshape(y, shape(moved()));
    std::vector<std::int64_t> inverse(static_cast<std::size_t>(x_.rank()));
    const std::vector<std::int64_t> order = permutation();
    for (std::size_t i = 0; i < order.size(); ++i) {
      inverse[static_cast<std::size_t>(order[i])] = static_cast<std::int64_t>(i);
    }
    return dimshuffle(unflat, inverse);
  }
  /// A per-channel result in the form of parameter `like`.
  [[nodiscard]] Variable per_channel(const Variable& v, const Variable& like) const {
    if (like.rank() == 1 && kept_.size() == 1) return v;
    std::vector<Variable> extents;
    for (std::int64_t axis = 0; axis < x_.rank(); ++axis) {
      const bool is_kept = std::find(kept_.begin(), kept_.end(), axis) != kept_.end();
      if (is_kept) {
        extents.push_back(extent(axis));
      } else if (like.rank() == x_.rank()) {
        extents.push_back(constant(Tensor::scalar(1, DType::Int64)));
      }
    }
    return reshape(v, extents);
  }

 private:
  [[nodiscard]] std::vector<std::int64_t> permutation() const {
    std::vector<std::int64_t> order = normalized_;
    order.insert(order.end(), kept_.begin(), kept_.end());
    return order;
  }
  [[nodiscard]] Variable moved() const { return dimshuffle(x_, permutation()); }
  [[nodiscard]] Variable extent(std::int64_t axis) const {
    const std::int64_t known = x_.type().dims[static_cast<int>(axis)];
    if (known == kUnknownDim) return shape_i(x_, axis);
    return constant(Tensor::scalar(static_cast<double>(known), DType::Int64));
  }
  [[nodiscard]] Variable product_of(const std::vector<std::int64_t>& axes) const {
    Variable result = constant(Tensor::scalar(1, DType::Int64));
    for (const std::int64_t axis : axes) result = result * extent(axis);
    return result;
  }
  static Variable reshape(const Variable& v, const std::vector<Variable>& extents) {
    return tscope::reshape(v, extents.empty() ? constant(Tensor::from_vector<std::int64_t>({0}, {}))
                                              : make_vector(extents));
  }
  static Variable reshape(const Variable& v, const std::vector<std::int64_t>& extents) {
    return tscope::reshape(v, extents);
  }

  Variable x_;
  std::vector<std::int64_t> normalized_;
  std::vector<std::int64_t> kept_;
  bool direct_ = false;
};

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
                                    const py::object& running_var, double epsilon, double momentum,
                                    const std::vector<std::int64_t>& axes) {
    PythonSite site("batch_norm");
    const Variable input = to_variable(x);
    const NormalizedLayout layout(input, axes);
    // One statement each, so that the first bad parameter is the one named.
    const Variable gamma_value = to_variable(gamma);
    const Variable gamma_vector = layout.parameter(gamma_value, "gamma");
    const Variable beta_vector = layout.parameter(to_variable(beta), "beta");
    const Variable mean_vector = layout.parameter(to_variable(running_mean), "running_mean");
    const Variable var_vector = layout.parameter(to_variable(running_var), "running_var");
    const BatchNormTraining result =
        batch_norm_train(layout.input(), gamma_vector, beta_vector, mean_vector, var_vector,
                         BatchNormOptions{epsilon, momentum});
    return py::make_tuple(layout.output(result.y),
                          layout.per_channel(result.batch_mean, gamma_value),
                          layout.per_channel(result.batch_var, gamma_value),
                          layout.per_channel(result.new_running_mean, gamma_value),
                          layout.per_channel(result.new_running_var, gamma_value));
  });

  module.def("batch_norm_inference",
             [](const py::object& x, const py::object& gamma, const py::object& beta,
                const py::object& mean, const py::object& var, double epsilon,
                const std::vector<std::int64_t>& axes) {
               PythonSite site("batch_norm");
               const Variable input = to_variable(x);
               const NormalizedLayout layout(input, axes);
               const Variable gamma_vector = layout.parameter(to_variable(gamma), "gamma");
               const Variable beta_vector = layout.parameter(to_variable(beta), "beta");
               const Variable mean_vector = layout.parameter(to_variable(mean), "mean");
               const Variable var_vector = layout.parameter(to_variable(var), "var");
               return layout.output(batch_norm_inference(layout.input(), gamma_vector, beta_vector,
                                                         mean_vector, var_vector,
                                                         BatchNormOptions{epsilon, 0.1}));
             });

  module.def("batch_normalization", [](const py::object& x, const py::object& gamma,
                                       const py::object& beta, const py::object& mean,
                                       const py::object& std) {
    PythonSite site("batch_normalization");
    return (to_variable(x) - to_variable(mean)) * (to_variable(gamma) / to_variable(std)) +
           to_variable(beta);
  });
}

}  // namespace tscope::python
