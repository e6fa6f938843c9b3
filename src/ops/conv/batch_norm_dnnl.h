// SPDX-License-Identifier: Apache-2.0
// The oneDNN path of the batch-normalisation ops (batch_normalization primitives with separate
// scale and shift), with the primitive cached per node as for convolutions and pooling.
#pragma once
#include <cstdint>

#include "tscope/core/tensor.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// y, mean, var = training-mode batch norm of x (contiguous float32, rank 2 to 5; outputs already
/// allocated). Returns false when oneDNN has no implementation (the caller runs the reference).
/// With `block` (8 or 16), x and y (and dy, dx below) are an (N, C, H, W) tensor stored
/// channel-blocked, (N, C/B, H, W, B).
[[nodiscard]] bool run_batch_norm_train_dnnl(KernelContext& ctx,
                                             double epsilon,
                                             const Tensor& x,
                                             const Tensor& gamma,
                                             const Tensor& beta,
                                             const Tensor& y,
                                             const Tensor& mean,
                                             const Tensor& var,
                                             std::int64_t block = 0);

/// y = batch norm of x with the given statistics.
[[nodiscard]] bool run_batch_norm_inference_dnnl(KernelContext& ctx,
                                                 double epsilon,
                                                 const Tensor& x,
                                                 const Tensor& gamma,
                                                 const Tensor& beta,
                                                 const Tensor& mean,
                                                 const Tensor& var,
                                                 const Tensor& y);

/// dx, dgamma, dbeta of training-mode batch norm, given dy and the forward pass's statistics.
[[nodiscard]] bool run_batch_norm_grad_dnnl(KernelContext& ctx,
                                            double epsilon,
                                            const Tensor& x,
                                            const Tensor& dy,
                                            const Tensor& gamma,
                                            const Tensor& mean,
                                            const Tensor& var,
                                            const Tensor& dx,
                                            const Tensor& dgamma,
                                            const Tensor& dbeta,
                                            std::int64_t block = 0);

}  // namespace tscope::ops::detail
