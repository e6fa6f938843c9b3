// SPDX-License-Identifier: Apache-2.0
// Dot: matrix and vector products. The fast kernel is one gemm (oneDNN for float32, BLAS for
// float64; blas_util.h); the reference kernel is three plain loops in double.
#include <cblas.h>

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
std::vector<Type> infer_dot(const InferContext& ctx) {
  const Type& a = ctx.input_type(0);
  const Type& b = ctx.input_type(1);
  if (a.rank() < 1 || a.rank() > 2 || b.rank() < 1 || b.rank() > 2) {
    throw_error(ErrorKind::TypeMismatch, "Dot takes 1-D or 2-D inputs, got {} and {}",
                a.to_string(), b.to_string());
  }
  if (a.dtype == DType::Bool || b.dtype == DType::Bool) {
    throw_error(ErrorKind::TypeMismatch, "Dot of bool inputs ({} and {})", a.to_string(),
                b.to_string());
  }
  const std::int64_t ka = a.dims[a.rank() - 1];
  const std::int64_t kb = b.dims[0];
  if (ka != kUnknownDim && kb != kUnknownDim && ka != kb) {
    throw_error(ErrorKind::ShapeMismatch, "Dot: inner dimensions differ: {} and {}",
                a.dims.to_string(), b.dims.to_string());
  }
  Dims dims;
  if (a.rank() == 2) dims.push_back(a.dims[0]);
  if (b.rank() == 2) dims.push_back(b.dims[1]);
  return {Type{promote_types(a.dtype, b.dtype), dims}};
}

struct DotShape {
  std::int64_t m, k, n;
};

DotShape check_dot_shapes(const KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const std::int64_t ka = a.shape()[a.rank() - 1];
  const std::int64_t kb = b.shape()[0];
  if (ka != kb) {
    throw Error(ErrorKind::ShapeMismatch,
                fmt::format("inner dimensions differ: {} and {}", a.shape().to_string(),
                            b.shape().to_string()))
        .add_context("in " + ctx.node->describe());
  }
  return {a.rank() == 2 ? a.shape()[0] : 1, ka, b.rank() == 2 ? b.shape()[1] : 1};
}

Dims dot_output_shape(const Tensor& a, const Tensor& b) {
  Dims dims;
  if (a.rank() == 2) dims.push_back(a.shape()[0]);
  if (b.rank() == 2) dims.push_back(b.shape()[1]);
  return dims;
}

void compute_dot_reference(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const DotShape s = check_dot_shapes(ctx);
  Tensor& out = ctx.allocate_output(0, promote_types(a.dtype(), b.dtype()), dot_output_shape(a, b));
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* data = static_cast<T*>(out.raw_data());
    for (std::int64_t i = 0; i < s.m; ++i) {
      for (std::int64_t j = 0; j < s.n; ++j) {
        double total = 0;
        for (std::int64_t p = 0; p < s.k; ++p) total += a.at(i * s.k + p) * b.at(p * s.n + j);
        data[i * s.n + j] = static_cast<T>(total);
      }
    }
  });
}

void compute_dot_blas(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const DotShape s = check_dot_shapes(ctx);
  Tensor& out = ctx.allocate_output(0, a.dtype(), dot_output_shape(a, b));
  if (s.m == 0 || s.n == 0) return;
  if (s.k == 0) {
    std::fill_n(static_cast<char*>(out.raw_data()), out.nbytes(), 0);
    return;
  }
  // Vectors are viewed (without copying) as 1-row / 1-column matrices so one gemm path serves
  // every case; the stride of the size-1 axis is irrelevant to BLAS.
  const Tensor a2 = a.rank() == 2 ? a : a.view(Dims{1, s.k}, Dims{s.k, a.strides()[0]}, a.offset());
  const Tensor b2 = b.rank() == 2 ? b : b.view(Dims{s.k, 1}, Dims{b.strides()[0], 1}, b.offset());
  const detail::BlasMatrix pa = detail::blas_matrix(a2, ctx);
  const detail::BlasMatrix pb = detail::blas_matrix(b2, ctx);
  if (a.dtype() == DType::Float32) {
    detail::blas_gemm_operands<float>(pa, pb, s.m, s.n, s.k, 1.0f, 0.0f,
                                      static_cast<float*>(out.raw_data()));
  } else {
    detail::blas_gemm_operands<double>(pa, pb, s.m, s.n, s.k, 1.0, 0.0,
                                       static_cast<double*>(out.raw_data()));
  }
}

bool blas_accepts(std::span<const Variable> inputs, const Attrs&) {
  return detail::all_same_float_dtype(inputs);
}

std::vector<Variable> pullback_dot(const PullbackContext& ctx) {
  const Variable& a = ctx.inputs[0];
  const Variable& b = ctx.inputs[1];
  const Variable& g = ctx.output_grads[0];
  if (a.rank() == 2 && b.rank() == 2) return {dot(g, transpose(b)), dot(transpose(a), g)};
  if (a.rank() == 2 && b.rank() == 1) {
    return {dot(dimshuffle(g, {0, kNewAxis}), dimshuffle(b, {kNewAxis, 0})), dot(transpose(a), g)};
  }
  if (a.rank() == 1 && b.rank() == 2) {
    return {dot(b, g), dot(dimshuffle(a, {0, kNewAxis}), dimshuffle(g, {kNewAxis, 0}))};
  }
  return {g * b, g * a};
}

Cost dot_cost(const CostContext& ctx) {
  const Dims& a = ctx.input_shapes[0];
  const Dims& b = ctx.input_shapes[1];
  const double m = a.rank() == 2 ? static_cast<double>(a[0]) : 1.0;
  const double k = static_cast<double>(a[a.rank() - 1]);
  const double n = b.rank() == 2 ? static_cast<double>(b[1]) : 1.0;
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  return Cost{2.0 * m * n * k, (m * k + k * n + m * n) * item};
}
}  // namespace

void register_dot(OpRegistry& registry) {
  registry.add({.name = "Dot",
                .family = "Dot",
                .summary = "matrix/vector product",
                .num_inputs = 2,
                .infer = infer_dot,
                .reference = {"ref", compute_dot_reference},
                .fast = {"blas", compute_dot_blas, blas_accepts, detail::gemm_library_label},
                .pullback = pullback_dot,
                .cost = dot_cost,
                .print = [](const OpDef&, const Attrs&) { return std::string("dot"); }});
}

}  // namespace tscope::ops

namespace tscope {

Variable dot(const Variable& a, const Variable& b, const std::source_location& location) {
  return apply_op1(op_def("Dot"), {a, b}, {}, location);
}

}  // namespace tscope
