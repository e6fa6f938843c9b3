// SPDX-License-Identifier: Apache-2.0
// Node constructors that take stored attrs, for pullbacks: a gradient node carries exactly the
// attrs of the node it differentiates (each defined in its op's file).
#pragma once
#include <source_location>
#include <vector>

#include "tscope/graph/attrs.h"
#include "tscope/graph/variable.h"
#include "tscope/ops/conv.h"

namespace tscope::ops::detail {

[[nodiscard]] Variable conv_node(const Variable& x, const Variable& w, const Attrs& attrs);
[[nodiscard]] Variable conv_grad_inputs_node(const Variable& w, const Variable& dy,
                                             const Variable& input_shape, const Attrs& attrs);
[[nodiscard]] Variable conv_grad_weights_node(const Variable& x, const Variable& dy,
                                              const Variable& weight_shape, const Attrs& attrs);

[[nodiscard]] Variable max_pool_grad_node(const Variable& x, const Variable& dy,
                                          const Attrs& attrs);
[[nodiscard]] Variable max_pool_grad_grad_node(const Variable& x, const Variable& h,
                                               const Attrs& attrs);
[[nodiscard]] Variable avg_pool_node(const Variable& x, const Attrs& attrs);
[[nodiscard]] Variable avg_pool_grad_node(const Variable& dy, const Variable& input_shape,
                                          const Attrs& attrs);

/// A (C,) vector as (1, C, 1, ...) of rank `rank`, broadcasting against x (N, C, spatial...).
[[nodiscard]] Variable channel_broadcast(const Variable& vector, int rank);
/// The number of values each channel's batch statistics average over, as a scalar of x's dtype.
[[nodiscard]] Variable channel_count(const Variable& x);
/// BatchNormTrain's outputs: y, batch mean, batch population variance.
[[nodiscard]] std::vector<Variable> batch_norm_train_node(const Variable& x, const Variable& gamma,
                                                          const Variable& beta, double epsilon,
                                                          const std::source_location& location);
[[nodiscard]] Variable batch_norm_inference_node(const Variable& x, const Variable& gamma,
                                                 const Variable& beta, const Variable& mean,
                                                 const Variable& var, double epsilon,
                                                 const std::source_location& location);

/// The stored attrs of a convolution node for `options` (full-length lists); throws
/// InvalidArgument for lists of the wrong length.
[[nodiscard]] Attrs conv_attrs(const ConvOptions& options, int spatial_rank, std::string_view label);

/// "Conv2d{stride=(1,1),pad=(0,0),dilation=(1,1),groups=1}" with `suffix` after "Conv2d".
[[nodiscard]] std::string conv_printed_name(std::string_view suffix, const Attrs& attrs);

}  // namespace tscope::ops::detail
