// SPDX-License-Identifier: Apache-2.0
#pragma once
// Moving one axis last and back: converters whose Tensorscope op works on the last axis only
// (softmax, products along an axis) wrap it in these two dimshuffles.
#include <cstdint>
#include <vector>

namespace tscope::onnx {

struct AxisToLast {
  std::vector<std::int64_t> there;  ///< dimshuffle pattern that moves the axis last
  std::vector<std::int64_t> back;   ///< its inverse
};

[[nodiscard]] inline AxisToLast axis_to_last(int rank, std::int64_t axis) {
  AxisToLast order;
  for (int i = 0; i < rank; ++i) {
    if (i != axis) order.there.push_back(i);
  }
  order.there.push_back(axis);
  order.back.resize(static_cast<std::size_t>(rank));
  for (int i = 0; i < rank; ++i) {
    order.back[static_cast<std::size_t>(order.there[static_cast<std::size_t>(i)])] = i;
  }
  return order;
}

}  // namespace tscope::onnx
