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

/// The voxel CNN on images h (N, in_channels, G, G, G): per entry of `channels` a conv3d (3^3,
/// same padding) + bias + relu + 2^3 max pool (G halves, rounding down), then flatten, a dense
/// layer of `hidden` units with relu and a dense layer to `classes` logits. The parameters,
/// drawn from `rng`, are appended to `params`.
[[nodiscard]] Variable voxel_cnn_logits(Variable h,
                                        std::int64_t in_channels,
                                        std::int64_t grid,
                                        const std::vector<std::int64_t>& channels,
                                        std::int64_t hidden,
                                        std::int64_t classes,
                                        DType dtype,
                                        std::mt19937_64& rng,
                                        std::vector<Variable>& params);

}  // namespace tscope::models::detail
