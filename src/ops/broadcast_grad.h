// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers shared by pullbacks.
#include "tscope/graph/variable.h"

namespace tscope::ops::detail {

/// Sums `grad` (shaped like a broadcast result) down to `type`: over leading axes `type` lacks and
/// over axes where `type` is statically 1. Returns `grad` unchanged when nothing broadcast.
Variable sum_to_type(const Variable& grad, const Type& type);

/// `grad` cast to `dtype` when it differs (gradients of mixed-dtype ops).
Variable cast_like(const Variable& grad, DType dtype);

}  // namespace tscope::ops::detail
