// SPDX-License-Identifier: Apache-2.0
// The batch-normalisation builders: parameter checks in the user's terms, the BatchNormTrain and
// BatchNormInference ops (batch_norm_ops.cpp), and the running averages as a small composite the
// caller passes as function updates. A provenance scope makes profiles and errors say
// "batch_norm".
#include <cstdint>
#include <vector>

#include "conv_nodes.h"
#include "tscope/core/error.h"
#include "tscope/graph/provenance.h"
#include "tscope/graph/type.h"
#include "tscope/ops/conv.h"
#include "tscope/ops/elementwise.h"

namespace tscope {
namespace {
void check_parameters(const char* label,
                      const Variable& x,
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
      throw_error(ErrorKind::ShapeMismatch, "{}: {} has {} values but x {} has {} channels", label,
                  name, length, x.type().dims.to_string(), channels);
    }
  }
}
}  // namespace

BatchNormTraining batch_norm_train(const Variable& x,
                                   const Variable& gamma,
                                   const Variable& beta,
                                   const Variable& running_mean,
                                   const Variable& running_var,
                                   const BatchNormOptions& options,
                                   const std::source_location& location) {
  ProvenanceScope scope("batch_norm", location);
  check_parameters("batch_norm_train", x,
                   {{"gamma", &gamma},
                    {"beta", &beta},
                    {"running_mean", &running_mean},
                    {"running_var", &running_var}});
  const std::vector<Variable> outputs =
      ops::detail::batch_norm_train_node(x, gamma, beta, options.epsilon, location);
  BatchNormTraining result;
  result.y = outputs[0];
  result.batch_mean = outputs[1];
  result.batch_var = outputs[2];
  const Variable count = ops::detail::channel_count(x);
  const Variable unbiased_var = result.batch_var * (count / (count - 1.0));
  const double keep = 1.0 - options.momentum;
  result.new_running_mean = running_mean * keep + result.batch_mean * options.momentum;
  result.new_running_var = running_var * keep + unbiased_var * options.momentum;
  return result;
}

Variable batch_norm_inference(const Variable& x,
                              const Variable& gamma,
                              const Variable& beta,
                              const Variable& mean,
                              const Variable& var,
                              const BatchNormOptions& options,
                              const std::source_location& location) {
  ProvenanceScope scope("batch_norm", location);
  check_parameters("batch_norm_inference", x,
                   {{"gamma", &gamma}, {"beta", &beta}, {"mean", &mean}, {"var", &var}});
  return ops::detail::batch_norm_inference_node(x, gamma, beta, mean, var, options.epsilon,
                                                location);
}

}  // namespace tscope
