// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Neural-network builders (Theano's tensor.nnet): softmax along the last axis, its stable log,
/// and the cross-entropy losses. Every loss returns one value per row; take mean() for a cost.
///
///   Variable logits = dot(h, W) + b;                     // (n, classes)
///   Variable labels = vector(DType::Int64, "labels");    // (n,) class indices
///   Variable cost = mean(softmax_cross_entropy(logits, labels));
///
/// relu() lives with the elementwise builders (tscope/ops/elementwise.h).
#include <cstdint>
#include <source_location>

#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

/// exp(x - max) / sum(exp(x - max)) along the last axis (rank >= 1, float).
Variable softmax(const Variable& x,
                 const std::source_location& location = std::source_location::current());

/// x - max - log(sum(exp(x - max))) along the last axis: log(softmax(x)) without underflow.
Variable log_softmax(const Variable& x,
                     const std::source_location& location = std::source_location::current());

/// The gradient of softmax: (dy - sum(dy * sm, last axis)) * sm, for sm = softmax(x).
Variable softmax_grad(const Variable& dy, const Variable& sm,
                      const std::source_location& location = std::source_location::current());

/// Settings of layer_norm().
struct LayerNormOptions {
  std::int64_t axis = -1;  ///< the first normalised axis; every axis after it is normalised too
  double epsilon = 1e-5;   ///< added to the variance before the square root
};

/// (x - mean) / sqrt(var + epsilon) * gamma + beta, with the mean and population variance of each
/// row of x's trailing axes from `options.axis` on (float x). gamma and beta have x's dtype and
/// broadcast over those axes (rank at most theirs, each dim 1 or the row's extent); an undefined
/// Variable leaves that parameter out (scale 1, shift 0). One op: the statistics of a row are
/// accumulated in double, then the row is written in one pass.
Variable layer_norm(const Variable& x, const Variable& gamma, const Variable& beta,
                    const LayerNormOptions& options = {},
                    const std::source_location& location = std::source_location::current());

/// -log(coding_dist[i, labels[i]]) for a 2-D distribution and 1-D integer labels (Theano's
/// CrossentropyCategorical1Hot). Throws IndexOutOfRange at call time for a label outside
/// [0, classes).
Variable crossentropy_categorical_1hot(
    const Variable& coding_dist, const Variable& labels,
    const std::source_location& location = std::source_location::current());

/// Theano's categorical_crossentropy: integer `targets` are class indices (as above); float
/// `targets` are one-hot or probability rows, giving -sum(targets * log(coding_dist), last axis).
Variable categorical_crossentropy(
    const Variable& coding_dist, const Variable& targets,
    const std::source_location& location = std::source_location::current());

/// Cross-entropy of softmax(logits) against integer labels in one stable op (log-sum-exp), with
/// gradient softmax(logits) - onehot(labels); float `targets` give
/// -sum(targets * log_softmax(logits), last axis).
Variable softmax_cross_entropy(
    const Variable& logits, const Variable& targets,
    const std::source_location& location = std::source_location::current());

/// -(target * log(output) + (1 - target) * log(1 - output)), elementwise, for outputs in (0, 1).
Variable binary_crossentropy(
    const Variable& output, const Variable& target,
    const std::source_location& location = std::source_location::current());

}  // namespace tscope

#pragma GCC visibility pop
