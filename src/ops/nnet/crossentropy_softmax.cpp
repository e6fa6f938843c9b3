// SPDX-License-Identifier: Apache-2.0
// CrossentropySoftmax1Hot: -log_softmax(logits)[i, labels[i]] in one pass per row (log-sum-exp),
// and its gradient op CrossentropySoftmax1HotDx: g[i] * (softmax(logits)[i] - onehot(labels[i]))
// (Theano fuses softmax + CrossentropyCategorical1Hot into the same pair of ops).
#include <algorithm>
#include <cmath>
#include <limits>

#include "nnet_common.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
Variable crossentropy_softmax_dx(const Variable& g, const Variable& logits,
                                 const Variable& labels) {
  return apply_op1(op_def("CrossentropySoftmax1HotDx"), {g, logits, labels}, {},
                   std::source_location::current());
}

std::vector<Type> infer_loss(const InferContext& ctx) {
  detail::check_float_rows(ctx, 0, "logits");
  detail::check_labels(ctx, 1);
  const Type& logits = ctx.input_type(0);
  if (logits.rank() != 2) {
    throw_error(ErrorKind::TypeMismatch, "{}: logits must be 2-D (rows, classes); got {}",
                ctx.op.name, logits.to_string());
  }
  detail::check_same_dim(ctx, logits.dims[0], ctx.input_type(1).dims[0], "row counts");
  return {Type{logits.dtype, Dims{logits.dims[0]}}};
}

// Row maximum and log(sum(exp(row - max))) of one row, read through `value(c)`.
template <class Read>
std::pair<double, double> row_log_sum_exp(std::int64_t classes, Read value) {
  double row_max = -std::numeric_limits<double>::infinity();
  for (std::int64_t c = 0; c < classes; ++c) row_max = std::max(row_max, value(c));
  double total = 0;
  for (std::int64_t c = 0; c < classes; ++c) total += std::exp(value(c) - row_max);
  return {row_max, std::log(total)};
}

void compute_loss_reference(KernelContext& ctx) {
  const Tensor& logits = ctx.input(0);
  const Tensor& labels = ctx.input(1);
  const std::int64_t rows = logits.shape()[0], classes = logits.shape()[1];
  detail::check_rows_match(ctx, logits, labels, rows, labels.shape()[0]);
  Tensor& out = ctx.allocate_output(0, logits.dtype(), Dims{rows});
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t label = detail::checked_label(ctx, labels, r, classes);
    const auto [row_max, log_total] =
        row_log_sum_exp(classes, [&](std::int64_t c) { return logits.at(r * classes + c); });
    detail::store_float(out, r, row_max + log_total - logits.at(r * classes + label));
  }
}

template <class T>
void run_loss_fast(KernelContext& ctx) {
  const Tensor logits = ctx.input(0).contiguous();
  const Tensor& labels = ctx.input(1);
  const std::int64_t rows = logits.shape()[0], classes = logits.shape()[1];
  detail::check_rows_match(ctx, logits, labels, rows, labels.shape()[0]);
  Tensor& out = ctx.allocate_output(0, logits.dtype(), Dims{rows});
  const T* data = static_cast<const T*>(logits.raw_data());
  T* loss = static_cast<T*>(out.raw_data());
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t label = detail::checked_label(ctx, labels, r, classes);
    const T* row = data + r * classes;
    const T row_max = *std::max_element(row, row + classes);
    T total = 0;
    for (std::int64_t c = 0; c < classes; ++c) total += std::exp(row[c] - row_max);
    loss[r] = row_max + std::log(total) - row[label];
  }
}

void compute_loss_fast(KernelContext& ctx) {
  if (ctx.input(0).dtype() == DType::Float32) {
    run_loss_fast<float>(ctx);
  } else {
    run_loss_fast<double>(ctx);
  }
}

std::vector<Variable> pullback_loss(const PullbackContext& ctx) {
  return {crossentropy_softmax_dx(ctx.output_grads[0], ctx.inputs[0], ctx.inputs[1]), Variable()};
}

Cost loss_cost(const CostContext& ctx) {
  const double n = static_cast<double>(ctx.input_shapes[0].product());
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  return Cost{3.0 * n, n * item};
}

std::vector<Type> infer_dx(const InferContext& ctx) {
  detail::check_float_rows(ctx, 0, "output gradient");
  detail::check_float_rows(ctx, 1, "logits");
  detail::check_labels(ctx, 2);
  const Type& g = ctx.input_type(0);
  const Type& logits = ctx.input_type(1);
  if (g.rank() != 1 || logits.rank() != 2 || g.dtype != logits.dtype) {
    throw_error(ErrorKind::TypeMismatch, "{}: expected a 1-D gradient and 2-D logits of one "
                "dtype; got {} and {}", ctx.op.name, g.to_string(), logits.to_string());
  }
  detail::check_same_dim(ctx, g.dims[0], logits.dims[0], "row counts");
  return {logits};
}

void compute_dx_reference(KernelContext& ctx) {
  const Tensor& g = ctx.input(0);
  const Tensor& logits = ctx.input(1);
  const Tensor& labels = ctx.input(2);
  const std::int64_t rows = logits.shape()[0], classes = logits.shape()[1];
  detail::check_rows_match(ctx, logits, labels, rows, labels.shape()[0]);
  detail::check_rows_match(ctx, logits, g, rows, g.shape()[0]);
  Tensor& out = ctx.allocate_output(0, logits.dtype(), logits.shape());
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t label = detail::checked_label(ctx, labels, r, classes);
    const auto [row_max, log_total] =
        row_log_sum_exp(classes, [&](std::int64_t c) { return logits.at(r * classes + c); });
    for (std::int64_t c = 0; c < classes; ++c) {
      const double probability = std::exp(logits.at(r * classes + c) - row_max - log_total);
      detail::store_float(out, r * classes + c,
                          g.at(r) * (probability - (c == label ? 1.0 : 0.0)));
    }
  }
}

template <class T>
void run_dx_fast(KernelContext& ctx) {
  const Tensor g = ctx.input(0).contiguous();
  const Tensor logits = ctx.input(1).contiguous();
  const Tensor& labels = ctx.input(2);
  const std::int64_t rows = logits.shape()[0], classes = logits.shape()[1];
  detail::check_rows_match(ctx, logits, labels, rows, labels.shape()[0]);
  detail::check_rows_match(ctx, logits, g, rows, g.shape()[0]);
  Tensor& out = ctx.allocate_output(0, logits.dtype(), logits.shape());
  const T* grad = static_cast<const T*>(g.raw_data());
  const T* data = static_cast<const T*>(logits.raw_data());
  T* dx = static_cast<T*>(out.raw_data());
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t label = detail::checked_label(ctx, labels, r, classes);
    const T* row = data + r * classes;
    T* dx_row = dx + r * classes;
    const T row_max = *std::max_element(row, row + classes);
    T total = 0;
    for (std::int64_t c = 0; c < classes; ++c) {
      dx_row[c] = std::exp(row[c] - row_max);
      total += dx_row[c];
    }
    const T scale = grad[r] / total;
    for (std::int64_t c = 0; c < classes; ++c) dx_row[c] *= scale;
    dx_row[label] -= grad[r];
  }
}

void compute_dx_fast(KernelContext& ctx) {
  if (ctx.input(1).dtype() == DType::Float32) {
    run_dx_fast<float>(ctx);
  } else {
    run_dx_fast<double>(ctx);
  }
}

Cost dx_cost(const CostContext& ctx) {
  const double n = static_cast<double>(ctx.input_shapes[1].product());
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[1]));
  return Cost{5.0 * n, 2.0 * n * item};
}
}  // namespace

void register_crossentropy_softmax(OpRegistry& registry) {
  registry.add({.name = "CrossentropySoftmax1Hot",
                .family = "CrossentropySoftmax1Hot",
                .summary = "-log_softmax(logits)[i, labels[i]], stable, for integer labels",
                .num_inputs = 2,
                .infer = infer_loss,
                .reference = {"ref", compute_loss_reference},
                .fast = {"cpu", compute_loss_fast},
                .pullback = pullback_loss,
                .cost = loss_cost,
                .print = [](const OpDef&, const Attrs&) {
                  return std::string("CrossentropySoftmax1Hot");
                }});
  registry.add({.name = "CrossentropySoftmax1HotDx",
                .family = "CrossentropySoftmax1HotDx",
                .summary = "gradient of CrossentropySoftmax1Hot: g * (softmax - onehot)",
                .num_inputs = 3,
                .infer = infer_dx,
                .reference = {"ref", compute_dx_reference},
                .fast = {"cpu", compute_dx_fast},
                .cost = dx_cost,
                .print = [](const OpDef&, const Attrs&) {
                  return std::string("CrossentropySoftmax1HotDx");
                }});
}

}  // namespace tscope::ops
