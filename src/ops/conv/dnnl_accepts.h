// SPDX-License-Identifier: Apache-2.0
// The link-time test of the oneDNN kernels, kept apart from dnnl_util.h so op files need not
// include oneDNN's headers.
#pragma once
#include <initializer_list>
#include <span>

#include "tscope/graph/variable.h"

namespace tscope::ops::detail {

/// True when the listed inputs are float32: oneDNN's CPU convolutions and pooling have no float64,
/// so float64 graphs run the reference kernels.
[[nodiscard]] bool inputs_are_float32(std::span<const Variable> inputs,
                                      std::initializer_list<int> indices);

}  // namespace tscope::ops::detail
