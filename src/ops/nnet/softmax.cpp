// SPDX-License-Identifier: Apache-2.0
// Softmax along the last axis and its gradient op SoftmaxGrad (one tight family, as in Theano's
// Softmax / SoftmaxGrad). Both subtract the row maximum first so exp never overflows.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "../elementwise/simd_wide.h"
#include "nnet_common.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/registry.h"
#include "tscope/threads/parallel_for.h"

namespace tscope::ops {
namespace {
std::vector<Type> infer_softmax(const InferContext& ctx) {
  detail::check_float_rows(ctx, 0, "x");
  return {ctx.input_type(0)};
}

void compute_softmax_reference(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const detail::RowShape s = detail::row_shape(x.shape());
  Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());
  for (std::int64_t r = 0; r < s.rows; ++r) {
    double row_max = -std::numeric_limits<double>::infinity();
    for (std::int64_t c = 0; c < s.classes; ++c) row_max = std::max(row_max, x.at(r * s.classes + c));
    double total = 0;
    for (std::int64_t c = 0; c < s.classes; ++c) total += std::exp(x.at(r * s.classes + c) - row_max);
    for (std::int64_t c = 0; c < s.classes; ++c) {
      detail::store_float(out, r * s.classes + c, std::exp(x.at(r * s.classes + c) - row_max) / total);
    }
  }
}

// The sum of a row's exponentials in double, over four independent chains so the additions of
// a long row overlap instead of waiting on one another.
template <class T>
double row_sum(const T* row, std::int64_t count) {
  double lanes[4] = {0, 0, 0, 0};
  std::int64_t c = 0;
  for (; c + 4 <= count; c += 4) {
    for (int k = 0; k < 4; ++k) lanes[k] += static_cast<double>(row[c + k]);
  }
  for (; c < count; ++c) lanes[0] += static_cast<double>(row[c]);
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

// Rows [first, last): the shifted row is written to the output, exponentiated there in place by
// the widest SLEEF exp this CPU runs (simd_wide.h; a scalar loop without one), then scaled.
template <class T>
void softmax_rows(
    const T* in, T* data, std::int64_t classes, std::int64_t first, std::int64_t last) {
  static const detail::WideKernel<T> wide_exp =
      detail::kernel_for<T>(detail::wide_kernels(detail::WideUnary::Exp));
  for (std::int64_t r = first; r < last; ++r) {
    const T* row = in + r * classes;
    T* out_row = data + r * classes;
    const T row_max = *std::max_element(row, row + classes);
    for (std::int64_t c = 0; c < classes; ++c) out_row[c] = row[c] - row_max;
    if (wide_exp != nullptr) {
      wide_exp(out_row, out_row, classes);
    } else {
      for (std::int64_t c = 0; c < classes; ++c) out_row[c] = std::exp(out_row[c]);
    }
    const T inverse = static_cast<T>(1.0 / row_sum(out_row, classes));
    for (std::int64_t c = 0; c < classes; ++c) out_row[c] *= inverse;
  }
}

template <class T>
void run_softmax_fast(KernelContext& ctx) {
  const Tensor x = ctx.input(0).contiguous();
  const detail::RowShape s = detail::row_shape(x.shape());
  Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());
  if (s.rows == 0 || s.classes == 0) return;
  const T* in = static_cast<const T*>(x.raw_data());
  T* data = static_cast<T*>(out.raw_data());
  // Chunks of elements, each taking the rows that start inside it: disjoint, and every row once.
  const std::int64_t classes = s.classes;
  threads::for_each_chunk(s.rows * classes, [&](std::int64_t begin, std::int64_t end) {
    softmax_rows(in, data, classes, (begin + classes - 1) / classes, (end + classes - 1) / classes);
  });
}

void compute_softmax_fast(KernelContext& ctx) {
  if (ctx.input(0).dtype() == DType::Float32) {
    run_softmax_fast<float>(ctx);
  } else {
    run_softmax_fast<double>(ctx);
  }
}

std::vector<Variable> pullback_softmax(const PullbackContext& ctx) {
  return {softmax_grad(ctx.output_grads[0], ctx.outputs[0])};
}

Cost softmax_cost(const CostContext& ctx) {
  const double n = static_cast<double>(ctx.input_shapes[0].product());
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  // max, subtract, exp, sum, scale: five passes of one operation per element.
  return Cost{5.0 * n, 2.0 * n * item};
}

std::vector<Type> infer_softmax_grad(const InferContext& ctx) {
  detail::check_float_rows(ctx, 0, "dy");
  detail::check_float_rows(ctx, 1, "sm");
  const Type& dy = ctx.input_type(0);
  const Type& sm = ctx.input_type(1);
  if (dy.dtype != sm.dtype || dy.rank() != sm.rank()) {
    throw_error(ErrorKind::TypeMismatch, "SoftmaxGrad: dy {} and sm {} must have one type",
                dy.to_string(), sm.to_string());
  }
  Dims dims = dy.dims;
  for (int axis = 0; axis < dy.rank(); ++axis) {
    detail::check_same_dim(ctx, dy.dims[axis], sm.dims[axis], "dims of dy and sm");
    if (dims[axis] == kUnknownDim) dims[axis] = sm.dims[axis];
  }
  return {Type{dy.dtype, dims}};
}

void check_softmax_grad_shapes(const KernelContext& ctx) {
  if (ctx.input(0).shape() == ctx.input(1).shape()) return;
  Error error(ErrorKind::ShapeMismatch,
              fmt::format("SoftmaxGrad: dy {} and sm {} differ", ctx.input(0).shape().to_string(),
                          ctx.input(1).shape().to_string()));
  if (ctx.node != nullptr) error.add_context("in " + ctx.node->describe());
  throw error;
}

void compute_softmax_grad_reference(KernelContext& ctx) {
  check_softmax_grad_shapes(ctx);
  const Tensor& dy = ctx.input(0);
  const Tensor& sm = ctx.input(1);
  const detail::RowShape s = detail::row_shape(dy.shape());
  Tensor& out = ctx.allocate_output(0, dy.dtype(), dy.shape());
  for (std::int64_t r = 0; r < s.rows; ++r) {
    double dot = 0;
    for (std::int64_t c = 0; c < s.classes; ++c) {
      dot += dy.at(r * s.classes + c) * sm.at(r * s.classes + c);
    }
    for (std::int64_t c = 0; c < s.classes; ++c) {
      const std::int64_t i = r * s.classes + c;
      detail::store_float(out, i, (dy.at(i) - dot) * sm.at(i));
    }
  }
}

template <class T>
void run_softmax_grad_fast(KernelContext& ctx) {
  const Tensor dy = ctx.input(0).contiguous();
  const Tensor sm = ctx.input(1).contiguous();
  const detail::RowShape s = detail::row_shape(dy.shape());
  Tensor& out = ctx.allocate_output(0, dy.dtype(), dy.shape());
  const T* dy_data = static_cast<const T*>(dy.raw_data());
  const T* sm_data = static_cast<const T*>(sm.raw_data());
  T* data = static_cast<T*>(out.raw_data());
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const std::int64_t base = r * s.classes;
    T dot = 0;
    for (std::int64_t c = 0; c < s.classes; ++c) dot += dy_data[base + c] * sm_data[base + c];
    for (std::int64_t c = 0; c < s.classes; ++c) {
      data[base + c] = (dy_data[base + c] - dot) * sm_data[base + c];
    }
  }
}

void compute_softmax_grad_fast(KernelContext& ctx) {
  check_softmax_grad_shapes(ctx);
  if (ctx.input(0).dtype() == DType::Float32) {
    run_softmax_grad_fast<float>(ctx);
  } else {
    run_softmax_grad_fast<double>(ctx);
  }
}

// dx = sm * (dy - S) with S = sum(dy * sm): linear in dy with the symmetric Jacobian of softmax,
// so d/d(dy) is softmax_grad(g, sm); d/d(sm) = g * (dy - S) - dy * sum(g * sm).
std::vector<Variable> pullback_softmax_grad(const PullbackContext& ctx) {
  const Variable& g = ctx.output_grads[0];
  const Variable& dy = ctx.inputs[0];
  const Variable& sm = ctx.inputs[1];
  const int last = sm.rank() - 1;
  Variable dy_dot_sm = sum(dy * sm, {last}, /*keepdims=*/true);
  Variable g_dot_sm = sum(g * sm, {last}, /*keepdims=*/true);
  return {softmax_grad(g, sm), g * (dy - dy_dot_sm) - dy * g_dot_sm};
}

Cost softmax_grad_cost(const CostContext& ctx) {
  const double n = static_cast<double>(ctx.input_shapes[0].product());
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  return Cost{4.0 * n, 3.0 * n * item};
}
}  // namespace

void register_softmax(OpRegistry& registry) {
  registry.add({.name = "Softmax",
                .family = "Softmax",
                .summary = "softmax along the last axis (max-shifted)",
                .num_inputs = 1,
                .infer = infer_softmax,
                .reference = {"ref", compute_softmax_reference},
                .fast = {"cpu", compute_softmax_fast},
                .pullback = pullback_softmax,
                .cost = softmax_cost,
                .print = [](const OpDef&, const Attrs&) { return std::string("Softmax"); }});
  registry.add({.name = "SoftmaxGrad",
                .family = "SoftmaxGrad",
                .summary = "gradient of softmax: (dy - sum(dy * sm)) * sm",
                .num_inputs = 2,
                .infer = infer_softmax_grad,
                .reference = {"ref", compute_softmax_grad_reference},
                .fast = {"cpu", compute_softmax_grad_fast},
                .pullback = pullback_softmax_grad,
                .cost = softmax_grad_cost,
                .print = [](const OpDef&, const Attrs&) { return std::string("SoftmaxGrad"); }});
}

}  // namespace tscope::ops

namespace tscope {

Variable softmax(const Variable& x, const std::source_location& location) {
  return apply_op1(op_def("Softmax"), {x}, {}, location);
}

Variable softmax_grad(const Variable& dy, const Variable& sm, const std::source_location& location) {
  return apply_op1(op_def("SoftmaxGrad"), {dy, sm}, {}, location);
}

}  // namespace tscope
