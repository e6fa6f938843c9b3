// SPDX-License-Identifier: Apache-2.0
// Gemv: beta * z + alpha * a.x for a matrix a and vectors x, z (Theano's Gemv, out of place).
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

std::vector<Type> infer_gemv(const InferContext& ctx) {
  detail::check_float_inputs(ctx, {1, 2, 1});
  const Type& z = ctx.input_type(0);
  const Type& a = ctx.input_type(1);
  const Type& x = ctx.input_type(2);
  if (known_differ(a.dims[1], x.dims[0]) || known_differ(a.dims[0], z.dims[0])) {
    throw_error(ErrorKind::ShapeMismatch, "Gemv: shapes z {}, a {}, x {} do not fit z + a.x",
                z.dims.to_string(), a.dims.to_string(), x.dims.to_string());
  }
  return {Type{a.dtype, Dims{a.dims[0] != kUnknownDim ? a.dims[0] : z.dims[0]}}};
}

void check_gemv_shapes(const KernelContext& ctx) {
  const Tensor& z = ctx.input(0);
  const Tensor& a = ctx.input(1);
  const Tensor& x = ctx.input(2);
  if (a.shape()[1] != x.shape()[0] || a.shape()[0] != z.shape()[0]) {
    detail::throw_kernel_shape_error(
        ctx, fmt::format("Gemv: shapes z {}, a {}, x {} do not fit z + a.x", z.shape().to_string(),
                         a.shape().to_string(), x.shape().to_string()));
  }
}

void compute_gemv_reference(KernelContext& ctx) {
  check_gemv_shapes(ctx);
  const Tensor& z = ctx.input(0);
  const Tensor& a = ctx.input(1);
  const Tensor& x = ctx.input(2);
  const double alpha = ctx.attrs->get_double("alpha");
  const double beta = ctx.attrs->get_double("beta");
  const std::int64_t m = a.shape()[0], n = a.shape()[1];
  Tensor& out = ctx.allocate_output(0, a.dtype(), Dims{m});
  for (std::int64_t i = 0; i < m; ++i) {
    double total = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      total += detail::element_at(a, i * a.strides()[0] + j * a.strides()[1]) *
               detail::element_at(x, j * x.strides()[0]);
    }
    detail::store_at(out, i, beta * detail::element_at(z, i * z.strides()[0]) + alpha * total);
  }
}

template <class T>
void run_gemv_blas(KernelContext& ctx) {
  const Tensor& z = ctx.input(0);
  const Tensor& a = ctx.input(1);
  const std::int64_t m = a.shape()[0], n = a.shape()[1];
  const T alpha = static_cast<T>(ctx.attrs->get_double("alpha"));
  const T beta = static_cast<T>(ctx.attrs->get_double("beta"));
  Tensor& out = ctx.allocate_output(0, a.dtype(), Dims{m});
  T* data = static_cast<T*>(out.raw_data());
  const T* z_data = static_cast<const T*>(z.raw_data());
  for (std::int64_t i = 0; i < m; ++i) data[i] = z_data[i * z.strides()[0]];
  if (m == 0) return;
  if (n == 0) {
    for (std::int64_t i = 0; i < m; ++i) data[i] *= beta;
    return;
  }
  const detail::BlasMatrix pa = detail::blas_matrix(a, ctx);
  const detail::BlasVector px = detail::blas_vector(ctx.input(2), ctx);
  // Row-major gemv with a transposed operand: BLAS sees the stored (n x m) matrix.
  const int rows = static_cast<int>(pa.transpose == CblasNoTrans ? m : n);
  const int cols = static_cast<int>(pa.transpose == CblasNoTrans ? n : m);
  const T* a_data = static_cast<const T*>(pa.tensor.raw_data());
  const T* x_data = static_cast<const T*>(px.tensor.raw_data());
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemv(CblasRowMajor, pa.transpose, rows, cols, alpha, a_data, pa.leading, x_data,
                px.increment, beta, data, 1);
  } else {
    cblas_dgemv(CblasRowMajor, pa.transpose, rows, cols, alpha, a_data, pa.leading, x_data,
                px.increment, beta, data, 1);
  }
}

void compute_gemv_blas(KernelContext& ctx) {
  check_gemv_shapes(ctx);
  if (ctx.input(0).dtype() == DType::Float32) {
    run_gemv_blas<float>(ctx);
  } else {
    run_gemv_blas<double>(ctx);
  }
}

bool gemv_blas_accepts(std::span<const Variable> inputs, const Attrs&) {
  return detail::all_same_float_dtype(inputs);
}

Variable scaled(const Variable& value, double factor) {
  return factor == 1.0 ? value : factor * value;
}

std::vector<Variable> pullback_gemv(const PullbackContext& ctx) {
  const Variable& g = ctx.output_grads[0];
  const double alpha = ctx.attrs.get_double("alpha");
  const double beta = ctx.attrs.get_double("beta");
  const Variable& a = ctx.inputs[1];
  const Variable& x = ctx.inputs[2];
  Variable outer = dot(dimshuffle(g, {0, kNewAxis}), dimshuffle(x, {kNewAxis, 0}));
  return {scaled(g, beta), scaled(outer, alpha), scaled(dot(transpose(a), g), alpha)};
}

Cost gemv_cost(const CostContext& ctx) {
  const double m = static_cast<double>(ctx.input_shapes[1][0]);
  const double n = static_cast<double>(ctx.input_shapes[1][1]);
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  return Cost{2.0 * m * n + 2.0 * m, (m * n + n + 2.0 * m) * item};
}
}  // namespace

void register_gemv(OpRegistry& registry) {
  registry.add({.name = "Gemv",
                .family = "Gemv",
                .summary = "beta * z + alpha * a.x through BLAS gemv",
                .num_inputs = 3,
                .infer = infer_gemv,
                .reference = {"ref", compute_gemv_reference},
                .fast = {"blas", compute_gemv_blas, gemv_blas_accepts},
                .pullback = pullback_gemv,
                .cost = gemv_cost,
                .print = [](const OpDef&, const Attrs&) { return std::string("Gemv{no_inplace}"); }});
}

}  // namespace tscope::ops

namespace tscope {

Variable gemv(const Variable& z, const Variable& a, const Variable& x, double alpha, double beta,
              const std::source_location& location) {
  return apply_op1(op_def("Gemv"), {z, a, x}, Attrs{{"alpha", alpha}, {"beta", beta}}, location);
}

}  // namespace tscope
