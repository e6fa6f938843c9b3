// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether a value of one static shape may stand where another is expected: an update's new value
// for its shared variable (function.cpp), a loop step's output for its state (scan_build.cpp).
#include "tscope/graph/type.h"

namespace tscope::runtime {

/// Same rank, and every axis equal or unknown on either side.
[[nodiscard]] inline bool dims_compatible(const Dims& a, const Dims& b) {
  if (a.rank() != b.rank()) return false;
  for (int axis = 0; axis < a.rank(); ++axis) {
    if (a[axis] != kUnknownDim && b[axis] != kUnknownDim && a[axis] != b[axis]) return false;
  }
  return true;
}

}  // namespace tscope::runtime
