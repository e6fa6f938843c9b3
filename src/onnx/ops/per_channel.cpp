// SPDX-License-Identifier: Apache-2.0
#include "per_channel.h"

#include <vector>

#include "tscope/ops/shape.h"

namespace tscope::onnx {

Variable per_channel(const Variable& values, int rank) {
  std::vector<std::int64_t> pattern = {kNewAxis, 0};
  for (int axis = 2; axis < rank; ++axis) pattern.push_back(kNewAxis);
  return dimshuffle(values, pattern);
}

}  // namespace tscope::onnx
