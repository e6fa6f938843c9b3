// SPDX-License-Identifier: Apache-2.0
#pragma once
// Per-channel parameters (bias, scale, slope, class weights): a (C,) vector shaped to broadcast
// against (N, C, d1, ...) feature maps.
#include "tscope/graph/variable.h"

namespace tscope::onnx {

[[nodiscard]] Variable per_channel(const Variable& values, int rank);

}  // namespace tscope::onnx
