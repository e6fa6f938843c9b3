// SPDX-License-Identifier: Apache-2.0
// Dot22: the product of two 2-D float matrices of one dtype (Theano's Dot22). The rewrite rule in
// src/rewrite/rules/blas.cpp turns 2-D Dot nodes into it; the fast kernel is one gemm (oneDNN
// for float32, BLAS for float64; blas_util.h).
#include <fmt/format.h>

#include "blas_util.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope::ops {
namespace {
std::vector<Type> infer_dot22(const InferContext& ctx) {
  detail::check_float_inputs(ctx, {2, 2});
  const Type& x = ctx.input_type(0);
  const Type& y = ctx.input_type(1);
  if (x.dims[1] != kUnknownDim && y.dims[0] != kUnknownDim && x.dims[1] != y.dims[0]) {
    throw_error(ErrorKind::ShapeMismatch, "Dot22: inner dimensions differ: {} and {}",
                x.dims.to_string(), y.dims.to_string());
  }
  return {Type{x.dtype, Dims{x.dims[0], y.dims[1]}}};
}

void check_inner(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  if (x.shape()[1] != y.shape()[0]) {
    detail::throw_kernel_shape_error(
        ctx, fmt::format("Dot22: inner dimensions differ: {} and {}", x.shape().to_string(),
                         y.shape().to_string()));
  }
}

void compute_dot22_reference(KernelContext& ctx) {
  check_inner(ctx);
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  const std::int64_t m = x.shape()[0], k = x.shape()[1], n = y.shape()[1];
  Tensor& out = ctx.allocate_output(0, x.dtype(), Dims{m, n});
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double total = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        total += detail::element_at(x, i * x.strides()[0] + p * x.strides()[1]) *
                 detail::element_at(y, p * y.strides()[0] + j * y.strides()[1]);
      }
      detail::store_at(out, i * n + j, total);
    }
  }
}

template <class T>
void run_dot22_blas(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  const std::int64_t m = x.shape()[0], k = x.shape()[1], n = y.shape()[1];
  Tensor& out = ctx.allocate_output(0, x.dtype(), Dims{m, n});
  if (m == 0 || n == 0) return;
  T* data = static_cast<T*>(out.raw_data());
  if (k == 0) {
    std::fill_n(data, m * n, T{0});
    return;
  }
  detail::blas_gemm_operands<T>(detail::blas_matrix(x, ctx), detail::blas_matrix(y, ctx), m, n, k,
                                T{1}, T{0}, data);
}

void compute_dot22_blas(KernelContext& ctx) {
  check_inner(ctx);
  if (ctx.input(0).dtype() == DType::Float32) {
    run_dot22_blas<float>(ctx);
  } else {
    run_dot22_blas<double>(ctx);
  }
}

bool dot22_blas_accepts(std::span<const Variable> inputs, const Attrs&) {
  return detail::all_same_float_dtype(inputs);
}

std::vector<Variable> pullback_dot22(const PullbackContext& ctx) {
  const Variable& g = ctx.output_grads[0];
  return {dot22(g, transpose(ctx.inputs[1])), dot22(transpose(ctx.inputs[0]), g)};
}

Cost dot22_cost(const CostContext& ctx) {
  const double m = static_cast<double>(ctx.input_shapes[0][0]);
  const double k = static_cast<double>(ctx.input_shapes[0][1]);
  const double n = static_cast<double>(ctx.input_shapes[1][1]);
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  return Cost{2.0 * m * n * k, (m * k + k * n + m * n) * item};
}
}  // namespace

void register_dot22(OpRegistry& registry) {
  registry.add(
      {.name = "Dot22",
       .family = "Dot22",
       .summary = "2-D matrix product through oneDNN sgemm (float32) or BLAS gemm (float64)",
       .num_inputs = 2,
       .infer = infer_dot22,
       .reference = {"ref", compute_dot22_reference},
       .fast = {"blas", compute_dot22_blas, dot22_blas_accepts, detail::gemm_library_label},
       .pullback = pullback_dot22,
       .cost = dot22_cost,
       .print = [](const OpDef&, const Attrs&) { return std::string("Dot22"); }});
}

}  // namespace tscope::ops

namespace tscope {

Variable dot22(const Variable& x, const Variable& y, const std::source_location& location) {
  return apply_op1(op_def("Dot22"), {x, y}, {}, location);
}

}  // namespace tscope
