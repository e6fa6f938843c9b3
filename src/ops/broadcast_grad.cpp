// SPDX-License-Identifier: Apache-2.0
#include "broadcast_grad.h"

#include <vector>

#include "tscope/ops/reduce.h"
#include "tscope/ops/shape.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope::ops::detail {

Variable sum_to_type(const Variable& grad, const Type& type) {
  const int lead = grad.rank() - type.rank();
  std::vector<std::int64_t> axes;
  for (int axis = 0; axis < grad.rank(); ++axis) {
    if (axis < lead) {
      axes.push_back(axis);
    } else if (type.dims[axis - lead] == 1 && grad.type().dims[axis] != 1) {
      axes.push_back(axis);
    }
  }
  Variable result = grad;
  if (!axes.empty()) result = sum(grad, axes, /*keepdims=*/true);
  if (lead > 0) {
    // Drop the leading (now size-1) axes.
    std::vector<std::int64_t> pattern;
    for (int axis = lead; axis < grad.rank(); ++axis) pattern.push_back(axis);
    result = dimshuffle(result, pattern);
  }
  return cast_like(result, type.dtype);
}

Variable cast_like(const Variable& grad, DType dtype) {
  if (grad.dtype() == dtype) return grad;
  return cast(grad, dtype);
}

}  // namespace tscope::ops::detail
