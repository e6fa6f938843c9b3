// SPDX-License-Identifier: Apache-2.0
// Ger: a + alpha * outer(x, y) (Theano's Ger, out of place: the output starts as a copy of a).
#include <fmt/format.h>

#include "blas_util.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope::ops {
namespace {
bool known_differ(std::int64_t a, std::int64_t b) {
  return a != kUnknownDim && b != kUnknownDim && a != b;
}

std::vector<Type> infer_ger(const InferContext& ctx) {
  detail::check_float_inputs(ctx, {2, 1, 1});
  const Type& a = ctx.input_type(0);
  const Type& x = ctx.input_type(1);
  const Type& y = ctx.input_type(2);
  if (known_differ(a.dims[0], x.dims[0]) || known_differ(a.dims[1], y.dims[0])) {
    throw_error(ErrorKind::ShapeMismatch, "Ger: shapes a {}, x {}, y {} do not fit a + x y^T",
                a.dims.to_string(), x.dims.to_string(), y.dims.to_string());
  }
  return {Type{a.dtype, Dims{a.dims[0] != kUnknownDim ? a.dims[0] : x.dims[0],
                             a.dims[1] != kUnknownDim ? a.dims[1] : y.dims[0]}}};
}

void check_ger_shapes(const KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  if (a.shape()[0] != x.shape()[0] || a.shape()[1] != y.shape()[0]) {
    detail::throw_kernel_shape_error(
        ctx, fmt::format("Ger: shapes a {}, x {}, y {} do not fit a + x y^T", a.shape().to_string(),
                         x.shape().to_string(), y.shape().to_string()));
  }
}

void compute_ger_reference(KernelContext& ctx) {
  check_ger_shapes(ctx);
  const Tensor& a = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  const double alpha = ctx.attrs->get_double("alpha");
  const std::int64_t m = a.shape()[0], n = a.shape()[1];
  Tensor& out = ctx.allocate_output(0, a.dtype(), Dims{m, n});
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const double outer = detail::element_at(x, i * x.strides()[0]) *
                           detail::element_at(y, j * y.strides()[0]);
      detail::store_at(out, i * n + j,
                       detail::element_at(a, i * a.strides()[0] + j * a.strides()[1]) +
                           alpha * outer);
    }
  }
}

template <class T>
void run_ger_blas(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const std::int64_t m = a.shape()[0], n = a.shape()[1];
  Tensor& out = ctx.allocate_output(0, a.dtype(), Dims{m, n});
  T* data = static_cast<T*>(out.raw_data());
  const T* a_data = static_cast<const T*>(a.raw_data());
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) data[i * n + j] = a_data[i * a.strides()[0] + j * a.strides()[1]];
  }
  if (m == 0 || n == 0) return;
  const detail::BlasVector px = detail::blas_vector(ctx.input(1), ctx);
  const detail::BlasVector py = detail::blas_vector(ctx.input(2), ctx);
  const T alpha = static_cast<T>(ctx.attrs->get_double("alpha"));
  const T* x_data = static_cast<const T*>(px.tensor.raw_data());
  const T* y_data = static_cast<const T*>(py.tensor.raw_data());
  if constexpr (std::is_same_v<T, float>) {
    cblas_sger(CblasRowMajor, static_cast<int>(m), static_cast<int>(n), alpha, x_data,
               px.increment, y_data, py.increment, data, static_cast<int>(n));
  } else {
    cblas_dger(CblasRowMajor, static_cast<int>(m), static_cast<int>(n), alpha, x_data,
               px.increment, y_data, py.increment, data, static_cast<int>(n));
  }
}

void compute_ger_blas(KernelContext& ctx) {
  check_ger_shapes(ctx);
  if (ctx.input(0).dtype() == DType::Float32) {
    run_ger_blas<float>(ctx);
  } else {
    run_ger_blas<double>(ctx);
  }
}

bool ger_blas_accepts(std::span<const Variable> inputs, const Attrs&) {
  return detail::all_same_float_dtype(inputs);
}

Variable scaled(const Variable& value, double factor) {
  return factor == 1.0 ? value : factor * value;
}

std::vector<Variable> pullback_ger(const PullbackContext& ctx) {
  const Variable& g = ctx.output_grads[0];
  const double alpha = ctx.attrs.get_double("alpha");
  return {g, scaled(dot(g, ctx.inputs[2]), alpha), scaled(dot(transpose(g), ctx.inputs[1]), alpha)};
}

Cost ger_cost(const CostContext& ctx) {
  const double m = static_cast<double>(ctx.input_shapes[0][0]);
  const double n = static_cast<double>(ctx.input_shapes[0][1]);
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  return Cost{2.0 * m * n, (2.0 * m * n + m + n) * item};
}
}  // namespace

void register_ger(OpRegistry& registry) {
  registry.add({.name = "Ger",
                .family = "Ger",
                .summary = "a + alpha * outer(x, y) through BLAS ger",
                .num_inputs = 3,
                .infer = infer_ger,
                .reference = {"ref", compute_ger_reference},
                .fast = {"blas", compute_ger_blas, ger_blas_accepts},
                .pullback = pullback_ger,
                .cost = ger_cost,
                .print = [](const OpDef&, const Attrs&) { return std::string("Ger{destructive=False}"); }});
}

}  // namespace tscope::ops

namespace tscope {

Variable ger(const Variable& a, const Variable& x, const Variable& y, double alpha,
             const std::source_location& location) {
  return apply_op1(op_def("Ger"), {a, x, y}, Attrs{{"alpha", alpha}}, location);
}

}  // namespace tscope
