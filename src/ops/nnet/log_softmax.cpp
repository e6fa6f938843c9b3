// SPDX-License-Identifier: Apache-2.0
// LogSoftmax along the last axis: x - max - log(sum(exp(x - max))). Stable where log(softmax(x))
// underflows to -inf for large negative logits.
#include <algorithm>
#include <cmath>
#include <limits>

#include "nnet_common.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
std::vector<Type> infer_log_softmax(const InferContext& ctx) {
  detail::check_float_rows(ctx, 0, "x");
  return {ctx.input_type(0)};
}

void compute_log_softmax_reference(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const detail::RowShape s = detail::row_shape(x.shape());
  Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());
  for (std::int64_t r = 0; r < s.rows; ++r) {
    double row_max = -std::numeric_limits<double>::infinity();
    for (std::int64_t c = 0; c < s.classes; ++c) row_max = std::max(row_max, x.at(r * s.classes + c));
    double total = 0;
    for (std::int64_t c = 0; c < s.classes; ++c) total += std::exp(x.at(r * s.classes + c) - row_max);
    const double log_total = std::log(total);
    for (std::int64_t c = 0; c < s.classes; ++c) {
      detail::store_float(out, r * s.classes + c, x.at(r * s.classes + c) - row_max - log_total);
    }
  }
}

template <class T>
void run_log_softmax_fast(KernelContext& ctx) {
  const Tensor x = ctx.input(0).contiguous();
  const detail::RowShape s = detail::row_shape(x.shape());
  Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());
  const T* in = static_cast<const T*>(x.raw_data());
  T* data = static_cast<T*>(out.raw_data());
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const T* row = in + r * s.classes;
    const T row_max = s.classes > 0 ? *std::max_element(row, row + s.classes) : T{0};
    T total = 0;
    for (std::int64_t c = 0; c < s.classes; ++c) total += std::exp(row[c] - row_max);
    const T shift = row_max + std::log(total);
    for (std::int64_t c = 0; c < s.classes; ++c) data[r * s.classes + c] = row[c] - shift;
  }
}

void compute_log_softmax_fast(KernelContext& ctx) {
  if (ctx.input(0).dtype() == DType::Float32) {
    run_log_softmax_fast<float>(ctx);
  } else {
    run_log_softmax_fast<double>(ctx);
  }
}

// d/dx = g - softmax(x) * sum(g), with softmax(x) = exp(out).
std::vector<Variable> pullback_log_softmax(const PullbackContext& ctx) {
  const Variable& g = ctx.output_grads[0];
  const int last = ctx.inputs[0].rank() - 1;
  return {g - exp(ctx.outputs[0]) * sum(g, {last}, /*keepdims=*/true)};
}

Cost log_softmax_cost(const CostContext& ctx) {
  const double n = static_cast<double>(ctx.input_shapes[0].product());
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  return Cost{4.0 * n, 2.0 * n * item};
}
}  // namespace

void register_log_softmax(OpRegistry& registry) {
  registry.add({.name = "LogSoftmax",
                .family = "LogSoftmax",
                .summary = "log of softmax along the last axis (log-sum-exp, stable)",
                .num_inputs = 1,
                .infer = infer_log_softmax,
                .reference = {"ref", compute_log_softmax_reference},
                .fast = {"cpu", compute_log_softmax_fast},
                .pullback = pullback_log_softmax,
                .cost = log_softmax_cost,
                .print = [](const OpDef&, const Attrs&) { return std::string("LogSoftmax"); }});
}

}  // namespace tscope::ops

namespace tscope {

Variable log_softmax(const Variable& x, const std::source_location& location) {
  return apply_op1(op_def("LogSoftmax"), {x}, {}, location);
}

}  // namespace tscope
