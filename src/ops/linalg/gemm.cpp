// SPDX-License-Identifier: Apache-2.0
// Gemm: beta * z + alpha * x.y with z broadcast to the (m, n) product (Theano's Gemm{no_inplace};
// the output is a fresh buffer, z is never overwritten). The rewrite rule in
// src/rewrite/rules/blas.cpp builds it from Dot22 plus or minus a scaled term, so a bias add or
// SGD's momentum update of a weight gradient costs no extra pass, and folds an erf GELU that
// follows into the optional "activation" attribute ("gelu_erf"), applied to the sum while the
// product's rows are still in cache.
// The fast kernel multiplies float32 with oneDNN (packed weights or sgemm) and float64 with BLAS;
// the profile's impl column says which ("dnnl" or "blas"), and blas_util.h says why float32
// products stay off OpenBLAS's threads.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <type_traits>

#include "../broadcast_grad.h"
#include "blas_util.h"
#include "gemm_matmul_dnnl.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope::ops {
namespace {
// z's axis for output axis `axis` (0 or 1), or -1 when z lacks it (z broadcasts along it).
int z_axis(int z_rank, int axis) { return axis - (2 - z_rank); }

bool applies_gelu(const Attrs& attrs) {
  if (!attrs.has("activation")) return false;
  const std::string& activation = attrs.get_string("activation");
  if (activation != "gelu_erf") {
    throw_error(ErrorKind::InvalidArgument, "Gemm: unknown activation '{}' (known: gelu_erf)",
                activation);
  }
  return true;
}

std::vector<Type> infer_gemm(const InferContext& ctx) {
  const Type& z = ctx.input_type(0);
  if (z.rank() > 2) {
    throw_error(ErrorKind::TypeMismatch, "Gemm: z must have rank <= 2; got {}", z.to_string());
  }
  detail::check_float_inputs(ctx, {z.rank(), 2, 2});
  // Checked when the node is built: the oneDNN path reads only whether an activation is set.
  (void)applies_gelu(ctx.attrs);
  const Type& x = ctx.input_type(1);
  const Type& y = ctx.input_type(2);
  if (x.dims[1] != kUnknownDim && y.dims[0] != kUnknownDim && x.dims[1] != y.dims[0]) {
    throw_error(ErrorKind::ShapeMismatch, "Gemm: inner dimensions of x.y differ: {} and {}",
                x.dims.to_string(), y.dims.to_string());
  }
  Dims dims{x.dims[0], y.dims[1]};
  for (int axis = 0; axis < 2; ++axis) {
    const int zi = z_axis(z.rank(), axis);
    if (zi < 0) continue;
    const std::int64_t extent = z.dims[zi];
    if (extent == kUnknownDim || extent == 1) continue;
    if (dims[axis] != kUnknownDim && dims[axis] != extent) {
      throw_error(ErrorKind::ShapeMismatch, "Gemm: z {} does not broadcast to x.y of {} x {}",
                  z.dims.to_string(), x.dims.to_string(), y.dims.to_string());
    }
    dims[axis] = extent;
  }
  return {Type{x.dtype, dims}};
}

struct GemmShape {
  std::int64_t m, k, n;
  Dims z_strides;  ///< z's strides over the (m, n) output; 0 along broadcast axes
};

GemmShape check_gemm_shapes(const KernelContext& ctx) {
  const Tensor& z = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  const auto fail = [&] {
    detail::throw_kernel_shape_error(
        ctx, fmt::format("Gemm: shapes z {}, x {}, y {} do not fit beta * z + alpha * x.y",
                         z.shape().to_string(), x.shape().to_string(), y.shape().to_string()));
  };
  if (x.shape()[1] != y.shape()[0]) fail();
  GemmShape s{x.shape()[0], x.shape()[1], y.shape()[1], Dims{0, 0}};
  const Dims out{s.m, s.n};
  for (int axis = 0; axis < 2; ++axis) {
    const int zi = z_axis(z.rank(), axis);
    if (zi < 0) continue;
    // As in Elemwise, only an axis that is statically 1 broadcasts.
    const bool static_one = ctx.node == nullptr || ctx.node->input(0).type().dims[zi] == 1;
    if (z.shape()[zi] == out[axis]) {
      s.z_strides[axis] = z.strides()[zi];
    } else if (!(z.shape()[zi] == 1 && static_one)) {
      fail();
    }
  }
  return s;
}

double gelu_erf(double v) { return 0.5 * v * (1.0 + std::erf(v / std::numbers::sqrt2)); }

void compute_gemm_reference(KernelContext& ctx) {
  const GemmShape s = check_gemm_shapes(ctx);
  const Tensor& z = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  const double alpha = ctx.attrs->get_double("alpha");
  const double beta = ctx.attrs->get_double("beta");
  const bool gelu = applies_gelu(*ctx.attrs);
  Tensor& out = ctx.allocate_output(0, x.dtype(), Dims{s.m, s.n});
  for (std::int64_t i = 0; i < s.m; ++i) {
    for (std::int64_t j = 0; j < s.n; ++j) {
      double total = 0;
      for (std::int64_t p = 0; p < s.k; ++p) {
        total += detail::element_at(x, i * x.strides()[0] + p * x.strides()[1]) *
                 detail::element_at(y, p * y.strides()[0] + j * y.strides()[1]);
      }
      const double zv = detail::element_at(z, i * s.z_strides[0] + j * s.z_strides[1]);
      const double sum = beta * zv + alpha * total;
      detail::store_at(out, i * s.n + j, gelu ? gelu_erf(sum) : sum);
    }
  }
}

// The activation as a pass over the product, where oneDNN could not apply it as a post-op.
template <class T>
void apply_activation(const KernelContext& ctx, T* data, std::int64_t count) {
  if (!applies_gelu(*ctx.attrs)) return;
  for (std::int64_t i = 0; i < count; ++i) data[i] = static_cast<T>(gelu_erf(data[i]));
}

// beta * z + alpha * x.y through BLAS into `data`, the (m, n) output.
template <class T>
void blas_gemm_into(KernelContext& ctx, const GemmShape& s, T* data) {
  const Tensor& z = ctx.input(0);
  const T alpha = static_cast<T>(ctx.attrs->get_double("alpha"));
  const T beta = static_cast<T>(ctx.attrs->get_double("beta"));
  const T* z_data = static_cast<const T*>(z.raw_data());
  // Seed the output with z broadcast (BLAS's C operand must be a full matrix), then let gemm
  // scale it by beta and add alpha * x.y in one pass.
  for (std::int64_t i = 0; i < s.m; ++i) {
    T* row = data + i * s.n;
    const T* z_row = z_data + i * s.z_strides[0];
    if (s.z_strides[1] == 1) {
      std::copy_n(z_row, s.n, row);
    } else {
      for (std::int64_t j = 0; j < s.n; ++j) row[j] = z_row[j * s.z_strides[1]];
    }
  }
  if (s.m == 0 || s.n == 0) return;
  if (s.k == 0) {
    for (std::int64_t i = 0; i < s.m * s.n; ++i) data[i] *= beta;
    return;
  }
  const detail::BlasMatrix a = detail::blas_matrix(ctx.input(1), ctx);
  const detail::BlasMatrix b = detail::blas_matrix(ctx.input(2), ctx);
  detail::blas_gemm_operands<T>(a, b, s.m, s.n, s.k, alpha, beta, data);
}

template <class T>
void run_gemm_fast(KernelContext& ctx, const GemmShape& s) {
  Tensor& out = ctx.allocate_output(0, ctx.input(0).dtype(), Dims{s.m, s.n});
  if constexpr (std::is_same_v<T, float>) {
    // The primitive applies the activation itself, as a post-op.
    if (detail::run_gemm_matmul_dnnl(ctx, s.m, s.k, s.n, s.z_strides, out)) return;
  }
  T* data = static_cast<T*>(out.raw_data());
  blas_gemm_into<T>(ctx, s, data);
  apply_activation(ctx, data, s.m * s.n);
}

void compute_gemm_fast(KernelContext& ctx) {
  const GemmShape s = check_gemm_shapes(ctx);
  if (ctx.input(0).dtype() == DType::Float32) {
    run_gemm_fast<float>(ctx, s);
  } else {
    run_gemm_fast<double>(ctx, s);
  }
}

bool gemm_blas_accepts(std::span<const Variable> inputs, const Attrs&) {
  return detail::all_same_float_dtype(inputs);
}

Variable scaled(const Variable& value, double factor) {
  return factor == 1.0 ? value : factor * value;
}

// The gradient through the activation, at the sum it was applied to (computed again: the
// fused node keeps only the activated output).
Variable through_activation(const PullbackContext& ctx, const Variable& g) {
  if (!applies_gelu(ctx.attrs)) return g;
  const Variable sum = gemm(ctx.inputs[0], ctx.inputs[1], ctx.inputs[2],
                            ctx.attrs.get_double("alpha"), ctx.attrs.get_double("beta"));
  // d/dv v * Phi(v) = Phi(v) + v * phi(v), Phi and phi the normal distribution and density.
  const Variable cdf = 0.5 * (1.0 + erf(sum * (1.0 / std::numbers::sqrt2)));
  const Variable density =
      exp(sqr(sum) * -0.5) * (0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
  return g * (cdf + sum * density);
}

std::vector<Variable> pullback_gemm(const PullbackContext& ctx) {
  const Variable g = through_activation(ctx, ctx.output_grads[0]);
  const double alpha = ctx.attrs.get_double("alpha");
  const double beta = ctx.attrs.get_double("beta");
  return {detail::sum_to_type(scaled(g, beta), ctx.inputs[0].type()),
          scaled(dot22(g, transpose(ctx.inputs[2])), alpha),
          scaled(dot22(transpose(ctx.inputs[1]), g), alpha)};
}

Cost gemm_cost(const CostContext& ctx) {
  const double m = static_cast<double>(ctx.input_shapes[1][0]);
  const double k = static_cast<double>(ctx.input_shapes[1][1]);
  const double n = static_cast<double>(ctx.input_shapes[2][1]);
  const double z = static_cast<double>(ctx.input_shapes[0].product());
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  // The activation, like the Elemwise ops it replaces: a multiply, a divide, an erf, an add and
  // a multiply per element.
  const double activation = applies_gelu(ctx.attrs) ? 5.0 * m * n : 0.0;
  return Cost{2.0 * m * n * k + 2.0 * m * n + activation, (z + m * k + k * n + m * n) * item};
}
}  // namespace

void register_gemm(OpRegistry& registry) {
  registry.add({.name = "Gemm",
                .family = "Gemm",
                .summary = "beta * z + alpha * x.y, optionally through an erf GELU, on oneDNN "
                           "(float32) or BLAS (float64)",
                .num_inputs = 3,
                .infer = infer_gemm,
                .reference = {"ref", compute_gemm_reference},
                .fast = {"blas", compute_gemm_fast, gemm_blas_accepts, detail::gemm_library_label},
                .pullback = pullback_gemm,
                .cost = gemm_cost,
                .print = [](const OpDef&, const Attrs& attrs) {
                  return std::string(applies_gelu(attrs) ? "Gemm{no_inplace,gelu_erf}"
                                                         : "Gemm{no_inplace}");
                }});
}

}  // namespace tscope::ops

namespace tscope {

Variable gemm(const Variable& z,
              const Variable& x,
              const Variable& y,
              double alpha,
              double beta,
              const std::source_location& location) {
  return apply_op1(op_def("Gemm"), {z, x, y}, Attrs{{"alpha", alpha}, {"beta", beta}}, location);
}

}  // namespace tscope
