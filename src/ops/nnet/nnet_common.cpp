// SPDX-License-Identifier: Apache-2.0
#include "nnet_common.h"

#include <fmt/format.h>

#include "tscope/graph/apply.h"

namespace tscope::ops::detail {

RowShape row_shape(const Dims& shape) {
  const std::int64_t classes = shape[shape.rank() - 1];
  std::int64_t rows = 1;
  for (int axis = 0; axis + 1 < shape.rank(); ++axis) rows *= shape[axis];
  return {rows, classes};
}

void check_float_rows(const InferContext& ctx, int index, const char* what) {
  const Type& type = ctx.input_type(index);
  if (!is_floating(type.dtype) || type.rank() < 1) {
    throw_error(ErrorKind::TypeMismatch, "{}: {} must be a float tensor of rank >= 1; got {}",
                ctx.op.name, what, type.to_string());
  }
}

void check_labels(const InferContext& ctx, int index) {
  const Type& type = ctx.input_type(index);
  if (!is_integral(type.dtype) || type.rank() != 1) {
    throw_error(ErrorKind::TypeMismatch, "{}: labels must be a 1-D integer vector; got {}",
                ctx.op.name, type.to_string());
  }
}

void check_same_dim(const InferContext& ctx, std::int64_t a, std::int64_t b, const char* what) {
  if (a != kUnknownDim && b != kUnknownDim && a != b) {
    std::string types;
    for (const Variable& input : ctx.inputs) {
      types += (types.empty() ? "" : ", ") + input.type().to_string();
    }
    throw_error(ErrorKind::ShapeMismatch, "{}: {} differ ({} vs {}); inputs {}", ctx.op.name, what,
                a, b, types);
  }
}

std::int64_t checked_label(const KernelContext& ctx, const Tensor& labels, std::int64_t row,
                           std::int64_t classes) {
  const double value = labels.at(row);
  if (!(value >= 0 && value < static_cast<double>(classes))) {
    Error error(ErrorKind::IndexOutOfRange,
                fmt::format("label {} of row {} is outside [0, {}) for {} classes", value, row,
                            classes, classes));
    if (ctx.node != nullptr) error.add_context("in " + ctx.node->describe());
    throw error;
  }
  return static_cast<std::int64_t>(value);
}

void check_rows_match(const KernelContext& ctx, const Tensor& a, const Tensor& b,
                      std::int64_t rows_a, std::int64_t rows_b) {
  if (rows_a == rows_b) return;
  Error error(ErrorKind::ShapeMismatch,
              fmt::format("row counts differ: {} has {} rows, {} has {}", a.shape().to_string(),
                          rows_a, b.shape().to_string(), rows_b));
  if (ctx.node != nullptr) error.add_context("in " + ctx.node->describe());
  throw error;
}

}  // namespace tscope::ops::detail
