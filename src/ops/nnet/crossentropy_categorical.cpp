// SPDX-License-Identifier: Apache-2.0
// CrossentropyCategorical1Hot: -log(coding_dist[i, labels[i]]) for integer labels, and its
// gradient op (Theano's CrossentropyCategorical1Hot / CrossentropyCategorical1HotGrad). Each row
// reads one element, so the plain loops are the only kernels: a fast variant would not pay.
#include <cmath>

#include "nnet_common.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
Variable crossentropy_categorical_1hot_grad(const Variable& g, const Variable& coding,
                                            const Variable& labels) {
  return apply_op1(op_def("CrossentropyCategorical1HotGrad"), {g, coding, labels}, {},
                   std::source_location::current());
}

std::vector<Type> infer_crossentropy(const InferContext& ctx) {
  detail::check_float_rows(ctx, 0, "coding_dist");
  detail::check_labels(ctx, 1);
  const Type& coding = ctx.input_type(0);
  if (coding.rank() != 2) {
    throw_error(ErrorKind::TypeMismatch, "{}: coding_dist must be 2-D (rows, classes); got {}",
                ctx.op.name, coding.to_string());
  }
  detail::check_same_dim(ctx, coding.dims[0], ctx.input_type(1).dims[0], "row counts");
  return {Type{coding.dtype, Dims{coding.dims[0]}}};
}

void compute_crossentropy_reference(KernelContext& ctx) {
  const Tensor& coding = ctx.input(0);
  const Tensor& labels = ctx.input(1);
  const std::int64_t rows = coding.shape()[0], classes = coding.shape()[1];
  detail::check_rows_match(ctx, coding, labels, rows, labels.shape()[0]);
  Tensor& out = ctx.allocate_output(0, coding.dtype(), Dims{rows});
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t label = detail::checked_label(ctx, labels, r, classes);
    detail::store_float(out, r, -std::log(coding.at(r * classes + label)));
  }
}

std::vector<Variable> pullback_crossentropy(const PullbackContext& ctx) {
  return {crossentropy_categorical_1hot_grad(ctx.output_grads[0], ctx.inputs[0], ctx.inputs[1]),
          Variable()};
}

Cost crossentropy_cost(const CostContext& ctx) {
  const double rows = static_cast<double>(ctx.input_shapes[0][0]);
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  return Cost{2.0 * rows, 2.0 * rows * item};
}

std::vector<Type> infer_crossentropy_grad(const InferContext& ctx) {
  detail::check_float_rows(ctx, 0, "output gradient");
  detail::check_float_rows(ctx, 1, "coding_dist");
  detail::check_labels(ctx, 2);
  const Type& g = ctx.input_type(0);
  const Type& coding = ctx.input_type(1);
  if (g.rank() != 1 || coding.rank() != 2 || g.dtype != coding.dtype) {
    throw_error(ErrorKind::TypeMismatch, "{}: expected a 1-D gradient and 2-D coding_dist of one "
                "dtype; got {} and {}", ctx.op.name, g.to_string(), coding.to_string());
  }
  detail::check_same_dim(ctx, g.dims[0], coding.dims[0], "row counts");
  return {coding};
}

// d/d coding[i, j] of -log(coding[i, y_i]) is -1 / coding[i, y_i] at j = y_i, zero elsewhere.
void compute_crossentropy_grad_reference(KernelContext& ctx) {
  const Tensor& g = ctx.input(0);
  const Tensor& coding = ctx.input(1);
  const Tensor& labels = ctx.input(2);
  const std::int64_t rows = coding.shape()[0], classes = coding.shape()[1];
  detail::check_rows_match(ctx, coding, labels, rows, labels.shape()[0]);
  detail::check_rows_match(ctx, coding, g, rows, g.shape()[0]);
  Tensor& out = ctx.allocate_output(0, coding.dtype(), coding.shape());
  for (std::int64_t i = 0; i < rows * classes; ++i) detail::store_float(out, i, 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t label = detail::checked_label(ctx, labels, r, classes);
    detail::store_float(out, r * classes + label, -g.at(r) / coding.at(r * classes + label));
  }
}

Cost crossentropy_grad_cost(const CostContext& ctx) {
  const double rows = static_cast<double>(ctx.input_shapes[1][0]);
  const double classes = static_cast<double>(ctx.input_shapes[1][1]);
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  return Cost{2.0 * rows, (rows * classes + 2.0 * rows) * item};
}
}  // namespace

void register_crossentropy_categorical(OpRegistry& registry) {
  registry.add({.name = "CrossentropyCategorical1Hot",
                .family = "CrossentropyCategorical1Hot",
                .summary = "-log(coding_dist[i, labels[i]]) for integer labels",
                .num_inputs = 2,
                .infer = infer_crossentropy,
                .reference = {"ref", compute_crossentropy_reference},
                .pullback = pullback_crossentropy,
                .cost = crossentropy_cost,
                .print = [](const OpDef&, const Attrs&) {
                  return std::string("CrossentropyCategorical1Hot");
                }});
  registry.add({.name = "CrossentropyCategorical1HotGrad",
                .family = "CrossentropyCategorical1HotGrad",
                .summary = "gradient of CrossentropyCategorical1Hot w.r.t. coding_dist",
                .num_inputs = 3,
                .infer = infer_crossentropy_grad,
                .reference = {"ref", compute_crossentropy_grad_reference},
                .cost = crossentropy_grad_cost,
                .print = [](const OpDef&, const Attrs&) {
                  return std::string("CrossentropyCategorical1HotGrad");
                }});
}

}  // namespace tscope::ops

namespace tscope {

Variable crossentropy_categorical_1hot(const Variable& coding_dist, const Variable& labels,
                                       const std::source_location& location) {
  return apply_op1(op_def("CrossentropyCategorical1Hot"), {coding_dist, labels}, {}, location);
}

}  // namespace tscope
