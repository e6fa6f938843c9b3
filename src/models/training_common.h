// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every built-in training job does the same way: draw its initial weights and data, and
// update its parameters by SGD with momentum.
#include <random>
#include <vector>

#include "tscope/core/tensor.h"
#include "tscope/runtime/function.h"

namespace tscope::models::detail {

/// A tensor of `dtype` and `shape` drawn from N(0, scale^2).
[[nodiscard]] Tensor random_normal(DType dtype,
                                   const Dims& shape,
                                   double scale,
                                   std::mt19937_64& rng);

/// Per parameter a velocity (a shared variable named "v_<param>", starting at zero) and the two
/// updates: v <- momentum v - learning_rate g, then param <- param + v.
[[nodiscard]] std::vector<Update> sgd_momentum_updates(const std::vector<Variable>& params,
                                                       const std::vector<Variable>& grads,
                                                       double learning_rate,
                                                       double momentum);

}  // namespace tscope::models::detail
