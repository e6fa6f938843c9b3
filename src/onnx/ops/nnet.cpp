// SPDX-License-Identifier: Apache-2.0
// ONNX neural-network ops built from Tensorscope ops: Softmax, LogSoftmax (both axis
// conventions), BatchNormalization (inference, opset 14+ training mode, and the trainable
// import's form), LayerNormalization (one LayerNorm node when only Y is requested), global
// pooling.
#include "../converter.h"
#include "per_channel.h"
#include "axis_order.h"
#include "shape_builder.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/conv.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/shape.h"

namespace tscope::onnx {
namespace {

using Outputs = std::vector<Variable>;
using LastAxisBuilder = Variable (*)(const Variable&, const std::source_location&);

/// Opset >= 13: along one axis; the axis moves last and back when it is not already.
Variable along_axis(LastAxisBuilder build, const Variable& x, std::int64_t axis) {
  const int rank = x.rank();
  if (axis == rank - 1) return build(x, std::source_location::current());
  const AxisToLast order = axis_to_last(rank, axis);
  return dimshuffle(build(dimshuffle(x, order.there), std::source_location::current()), order.back);
}

/// Opset < 13: the input is coerced to 2-D at `axis` ([d0 * ... * d(axis-1), rest]).
Variable coerced_2d(LastAxisBuilder build, const Variable& x, std::int64_t axis) {
  ShapeBuilder flat;
  flat.add_product_of(x, 0, static_cast<int>(axis));
  flat.add_product_of(x, static_cast<int>(axis), x.rank());
  const Variable result = build(flat.reshape(x), std::source_location::current());
  ShapeBuilder original;
  for (int i = 0; i < x.rank(); ++i) original.add_axis_of(x, i);
  return original.reshape(result);
}

template <LastAxisBuilder Build>
Outputs softmax_family(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  if (ctx.opset() >= 13) {
    return {along_axis(Build, x, ctx.axis(ctx.attribute_int("axis", -1), x.rank(), "axis"))};
  }
  return {coerced_2d(Build, x, ctx.axis(ctx.attribute_int("axis", 1), x.rank(), "axis"))};
}

// True when scale, bias, mean and var are (C,) vectors of x's dtype: the BatchNorm ops' form.
bool per_channel_parameters(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  for (int index = 1; index <= 4; ++index) {
    const Variable& parameter = ctx.input(index);
    if (parameter.rank() != 1 || parameter.dtype() != x.dtype()) return false;
  }
  return true;
}

// Opset 14+ training mode: normalise with the batch's statistics, and return the running
// averages ONNX defines: input * momentum + batch statistic * (1 - momentum), with the population
// variance (as ONNX's reference does; Tensorscope's own running variance is unbiased).
Outputs batch_normalization_training(NodeContext& ctx, double epsilon) {
  const double momentum = ctx.attribute_float("momentum", 0.9);
  const Variable& x = ctx.input(0);
  if (!per_channel_parameters(ctx)) {
    ctx.unsupported("BatchNormalization in training mode with parameters other than (C,) vectors "
                    "of the input's type");
  }
  const BatchNormTraining bn = batch_norm_train(x, ctx.input(1), ctx.input(2), ctx.input(3),
                                                ctx.input(4), {.epsilon = epsilon});
  Outputs outputs{bn.y};
  if (ctx.num_outputs() > 1) {
    outputs.push_back(ctx.input(3) * momentum + bn.batch_mean * (1.0 - momentum));
  }
  if (ctx.num_outputs() > 2) {
    outputs.push_back(ctx.input(4) * momentum + bn.batch_var * (1.0 - momentum));
  }
  return outputs;
}

// A trainable import's BatchNormalization, whatever its training_mode: normalise with the batch's
// statistics and move the running averages (shared variables) towards them after each call, as
// the framework the model was trained in does: ONNX's momentum is the running average's own
// weight, and the running variance takes the unbiased batch variance (PyTorch's rule). The
// training-mode outputs of opset 14+ keep ONNX's definition.
Outputs trainable_batch_normalization(NodeContext& ctx, double epsilon) {
  ctx.ignore_attribute("is_test");
  ctx.ignore_attribute("spatial");
  ctx.ignore_attribute("training_mode");
  if (!per_channel_parameters(ctx)) {
    ctx.unsupported(
        "BatchNormalization with parameters other than (C,) vectors of the input's "
        "type in a trainable import");
  }
  if (ctx.opset() < 14 && ctx.num_outputs() > 1) {
    ctx.unsupported(
        "BatchNormalization's training outputs (mean, var, saved statistics) before "
        "opset 14");
  }
  const double momentum = ctx.attribute_float("momentum", 0.9);
  const Variable& running_mean = ctx.input(3);
  const Variable& running_var = ctx.input(4);
  const BatchNormTraining bn =
      batch_norm_train(ctx.input(0), ctx.input(1), ctx.input(2), running_mean, running_var,
                       {.epsilon = epsilon, .momentum = 1.0 - momentum});
  TrainingState& training = *ctx.training();
  if (running_mean.kind() == VariableKind::Shared) {
    training.add_state_update(running_mean, bn.new_running_mean);
  }
  if (running_var.kind() == VariableKind::Shared) {
    training.add_state_update(running_var, bn.new_running_var);
  }
  Outputs outputs{bn.y};
  if (ctx.num_outputs() > 1)
    outputs.push_back(running_mean * momentum + bn.batch_mean * (1.0 - momentum));
  if (ctx.num_outputs() > 2)
    outputs.push_back(running_var * momentum + bn.batch_var * (1.0 - momentum));
  return outputs;
}

Outputs convert_batch_normalization(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const double epsilon = ctx.attribute_float("epsilon", 1e-5);
  const int rank = x.rank();
  if (rank < 2) throw_error(ErrorKind::ShapeMismatch, "input of rank {} has no channel axis", rank);
  if (ctx.training() != nullptr) return trainable_batch_normalization(ctx, epsilon);
  if (ctx.opset() >= 14 && ctx.attribute_int("training_mode", 0) != 0) {
    return batch_normalization_training(ctx, epsilon);
  }
  if (ctx.num_outputs() > 1) {
    ctx.unsupported("BatchNormalization's training outputs (mean, var, saved statistics) before "
                    "opset 14");
  }
  ctx.ignore_attribute("momentum");  // only used in training mode
  ctx.ignore_attribute("is_test");   // opset < 7; inference whenever only Y is requested
  ctx.ignore_attribute("spatial");   // opset < 9; 1 (per channel) is the only common value
  if (per_channel_parameters(ctx)) {
    return {batch_norm_inference(x, ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4),
                                 {.epsilon = epsilon})};
  }
  const Variable scale = per_channel(ctx.input(1), rank);
  const Variable bias = per_channel(ctx.input(2), rank);
  const Variable mean = per_channel(ctx.input(3), rank);
  const Variable variance = per_channel(ctx.input(4), rank);
  return {(x - mean) * (scale / sqrt(variance + epsilon)) + bias};
}

Outputs convert_layer_normalization(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const std::int64_t axis = ctx.axis(ctx.attribute_int("axis", -1), x.rank(), "axis");
  const double epsilon = ctx.attribute_float("epsilon", 1e-5);
  if (ctx.has_attribute("stash_type") && ctx.attribute_int("stash_type", 1) != 1) {
    ctx.unsupported("stash_type other than float");
  }
  const Variable& scale = ctx.input(1);
  const Variable bias = ctx.has_input(2) ? ctx.input(2) : Variable();
  // Only Y requested (the common case): one LayerNorm node. Its parameters broadcast over the
  // normalised axes only, as ONNX defines them; the Mean and InvStdDev outputs, or parameters
  // with more axes, take the composed form.
  const auto fits = [&](const Variable& p) {
    return !p.defined() || (p.rank() <= x.rank() - axis && p.dtype() == x.dtype());
  };
  bool statistics_requested = false;
  for (int k = 1; k < ctx.num_outputs(); ++k) {
    statistics_requested = statistics_requested || !ctx.node().output(k).empty();
  }
  if (!statistics_requested && fits(scale) && fits(bias)) {
    return {layer_norm(x, scale, bias, {.axis = axis, .epsilon = epsilon})};
  }
  std::vector<std::int64_t> axes;
  for (std::int64_t i = axis; i < x.rank(); ++i) axes.push_back(i);
  const Variable average = mean(x, axes, /*keepdims=*/true);
  const Variable centred = x - average;
  const Variable variance = mean(sqr(centred), axes, /*keepdims=*/true);
  const Variable inverse_std = reciprocal(sqrt(variance + epsilon));
  Variable result = centred * inverse_std * scale;
  if (bias.defined()) result = result + bias;
  return {result, average, inverse_std};
}

std::vector<std::int64_t> spatial_axes(const Variable& x) {
  std::vector<std::int64_t> axes;
  for (int axis = 2; axis < x.rank(); ++axis) axes.push_back(axis);
  return axes;
}

Outputs convert_instance_normalization(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const double epsilon = ctx.attribute_float("epsilon", 1e-5);
  const std::vector<std::int64_t> axes = spatial_axes(x);
  const Variable centred = x - mean(x, axes, /*keepdims=*/true);
  const Variable variance = mean(sqr(centred), axes, /*keepdims=*/true);
  return {centred / sqrt(variance + epsilon) * per_channel(ctx.input(1), x.rank()) +
          per_channel(ctx.input(2), x.rank())};
}

/// 1 at the first maximum along the last axis, 0 elsewhere.
Variable hardmax_last_axis(const Variable& x, const std::source_location& /*location*/) {
  const std::int64_t extent = x.type().dims[x.rank() - 1];
  if (extent == kUnknownDim) {
    throw_error(ErrorKind::Unsupported, "Hardmax over an axis of unknown extent is not supported");
  }
  std::vector<double> indices;
  for (std::int64_t i = 0; i < extent; ++i) indices.push_back(static_cast<double>(i));
  const Variable index = constant(Tensor::from_doubles(DType::Int64, {extent}, indices));
  return cast(eq(argmax(x, {x.rank() - 1}, /*keepdims=*/true), index), x.dtype());
}

Outputs convert_global_average_pool(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  return {mean(x, spatial_axes(x), /*keepdims=*/true)};
}

Outputs convert_global_max_pool(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  return {max(x, spatial_axes(x), /*keepdims=*/true)};
}

}  // namespace

void register_nnet_converters(ConverterTable& table) {
  table.add("BatchNormalization", 6, convert_batch_normalization);
  table.add("GlobalAveragePool", 1, convert_global_average_pool);
  table.add("GlobalMaxPool", 1, convert_global_max_pool);
  table.add("Hardmax", 1, softmax_family<hardmax_last_axis>);
  table.add("InstanceNormalization", 6, convert_instance_normalization);
  table.add("LayerNormalization", 17, convert_layer_normalization);
  table.add("LogSoftmax", 1, softmax_family<log_softmax>);
  table.add("Softmax", 1, softmax_family<softmax>);
}

}  // namespace tscope::onnx
