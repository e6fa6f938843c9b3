// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers shared by the nnet ops: the (rows, classes) view of a tensor whose last axis holds the
// classes, strided reads for reference kernels, and the checks of integer labels.
#include <cstdint>
#include <string>

#include "tscope/core/tensor.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// A tensor seen as rows of `classes` values along its last axis.
struct RowShape {
  std::int64_t rows = 0;
  std::int64_t classes = 0;
};
[[nodiscard]] RowShape row_shape(const Dims& shape);

/// Throws TypeMismatch unless `type` is float32/float64 with rank >= 1 (`what` names the input).
void check_float_rows(const InferContext& ctx, int index, const char* what);
/// Throws TypeMismatch unless `type` is a 1-D integer vector of labels.
void check_labels(const InferContext& ctx, int index);
/// Throws ShapeMismatch unless two static dims agree (unknown dims agree with anything).
void check_same_dim(const InferContext& ctx, std::int64_t a, std::int64_t b, const char* what);

/// Label `row` as int64, checked against [0, classes): IndexOutOfRange naming the node otherwise.
[[nodiscard]] std::int64_t checked_label(const KernelContext& ctx, const Tensor& labels,
                                         std::int64_t row, std::int64_t classes);
/// Throws ShapeMismatch naming the node and both shapes unless `rows` agree.
void check_rows_match(const KernelContext& ctx, const Tensor& a, const Tensor& b,
                      std::int64_t rows_a, std::int64_t rows_b);

/// Stores `value` at flat index `index` of a contiguous float tensor.
inline void store_float(Tensor& tensor, std::int64_t index, double value) {
  if (tensor.dtype() == DType::Float32) {
    static_cast<float*>(tensor.raw_data())[index] = static_cast<float>(value);
  } else {
    static_cast<double*>(tensor.raw_data())[index] = value;
  }
}

}  // namespace tscope::ops::detail
