// SPDX-License-Identifier: Apache-2.0
#include "reference_loops.h"

namespace tscope::ops::detail {

Window3 lift_to_3d(const Window& window) {
  Window3 lifted{{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}};
  const int shift = kMaxSpatialRank - window.spatial_rank;
  for (int axis = 0; axis < window.spatial_rank; ++axis) {
    const auto from = static_cast<std::size_t>(axis);
    const auto to = static_cast<std::size_t>(axis + shift);
    lifted.input[to] = window.input[from];
    lifted.kernel[to] = window.kernel[from];
    lifted.stride[to] = window.stride[from];
    lifted.dilation[to] = window.dilation[from];
    lifted.pad_begin[to] = window.pad_begin[from];
    lifted.output[to] = window.output[from];
  }
  return lifted;
}

void store_doubles(Tensor& out, const std::vector<double>& values) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* data = static_cast<T*>(out.raw_data());
    for (std::size_t i = 0; i < values.size(); ++i) data[i] = static_cast<T>(values[i]);
  });
}

}  // namespace tscope::ops::detail
