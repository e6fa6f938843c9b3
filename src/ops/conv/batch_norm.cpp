// SPDX-License-Identifier: Apache-2.0
// Batch normalisation as a composite: mean and population variance over every axis but the
// channel axis, then elementwise normalisation, scale and shift. No OpDef of its own: the pieces
// already have kernels and pullbacks, the elementwise tail fuses, and a provenance scope makes
// profiles and errors say "batch_norm". A dedicated op (oneDNN's batch_normalization) is the
// step to take if profiles show these passes dominate.
#include <cstdint>
#include <vector>

#include "tscope/core/error.h"
#include "tscope/graph/provenance.h"
#include "tscope/graph/type.h"
#include "tscope/ops/conv.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/shape.h"

namespace tscope {
namespace {
// Every axis of x but the channel axis.
std::vector<std::int64_t> statistic_axes(const Variable& x) {
  std::vector<std::int64_t> axes{0};
  for (int axis = 2; axis < x.rank(); ++axis) axes.push_back(axis);
  return axes;
}

void check_parameters(const char* label, const Variable& x,
                      std::initializer_list<std::pair<const char*, const Variable*>> parameters) {
  if (x.rank() < 2) {
    throw_error(ErrorKind::TypeMismatch, "{}: x {} must have rank >= 2 (N, C, spatial...)", label,
                x.type().to_string());
  }
  const std::int64_t channels = x.type().dims[1];
  for (const auto& [name, parameter] : parameters) {
    if (parameter->rank() != 1) {
      throw_error(ErrorKind::TypeMismatch, "{}: {} {} must be a vector of one value per channel",
                  label, name, parameter->type().to_string());
    }
    const std::int64_t length = parameter->type().dims[0];
    if (channels != kUnknownDim && length != kUnknownDim && length != channels) {
      throw_error(ErrorKind::ShapeMismatch, "{}: {} has {} values but x {} has {} channels",
                  label, name, length, x.type().dims.to_string(), channels);
    }
  }
}

// A (C,) vector as (1, C, 1, ...), broadcasting against x.
Variable per_channel(const Variable& vector, int rank) {
  std::vector<std::int64_t> pattern(static_cast<std::size_t>(rank), kNewAxis);
  pattern[1] = 0;
  return dimshuffle(vector, pattern);
}

// (1, C, 1, ...) back to (C,).
Variable channel_vector(const Variable& kept) { return dimshuffle(kept, {1}); }

Variable normalise(const Variable& x, const Variable& mean, const Variable& var,
                   const Variable& gamma, const Variable& beta, double epsilon) {
  return (x - mean) / sqrt(var + epsilon) * per_channel(gamma, x.rank()) +
         per_channel(beta, x.rank());
}

// The number of values each channel's statistics average over, as a float scalar.
Variable statistic_count(const Variable& x) {
  Variable count = shape_i(x, 0);
  for (int axis = 2; axis < x.rank(); ++axis) count = count * shape_i(x, axis);
  return cast(count, x.dtype());
}
}  // namespace

BatchNormTraining batch_norm_train(const Variable& x, const Variable& gamma, const Variable& beta,
                                   const Variable& running_mean, const Variable& running_var,
                                   const BatchNormOptions& options,
                                   const std::source_location& location) {
  ProvenanceScope scope("batch_norm", location);
  check_parameters("batch_norm_train", x,
                   {{"gamma", &gamma}, {"beta", &beta}, {"running_mean", &running_mean},
                    {"running_var", &running_var}});
  const std::vector<std::int64_t> axes = statistic_axes(x);
  Variable mean_kept = mean(x, axes, /*keepdims=*/true, location);
  Variable var_kept = var(x, axes, /*keepdims=*/true, location);
  BatchNormTraining result;
  result.y = normalise(x, mean_kept, var_kept, gamma, beta, options.epsilon);
  result.batch_mean = channel_vector(mean_kept);
  result.batch_var = channel_vector(var_kept);
  const Variable count = statistic_count(x);
  const Variable unbiased_var = result.batch_var * (count / (count - 1.0));
  const double keep = 1.0 - options.momentum;
  result.new_running_mean = running_mean * keep + result.batch_mean * options.momentum;
  result.new_running_var = running_var * keep + unbiased_var * options.momentum;
  return result;
}

Variable batch_norm_inference(const Variable& x, const Variable& gamma, const Variable& beta,
                              const Variable& mean, const Variable& var,
                              const BatchNormOptions& options,
                              const std::source_location& location) {
  ProvenanceScope scope("batch_norm", location);
  check_parameters("batch_norm_inference", x,
                   {{"gamma", &gamma}, {"beta", &beta}, {"mean", &mean}, {"var", &var}});
  return normalise(x, per_channel(mean, x.rank()), per_channel(var, x.rank()), gamma, beta,
                   options.epsilon);
}

}  // namespace tscope
