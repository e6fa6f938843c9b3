// SPDX-License-Identifier: Apache-2.0
// Batch normalisation as three ops over x (N, C, spatial...) with per-channel gamma and beta:
// - BatchNormTrain: y, batch mean and population variance from the batch's statistics;
// - BatchNormGrad: dx, dgamma, dbeta of BatchNormTrain's y, given dy and those statistics;
// - BatchNormInference: y from given statistics (running averages, or an imported model's).
// Ops of their own, on oneDNN's batch_normalization, because a composite of reductions and
// elementwise ops reads x five times in the training pass and over a dozen times in its gradient.
// BatchNormGrad is a gradient op without a gradient of its own (second derivatives of batch norm
// are not supported and say so).
#include <fmt/format.h>

#include <cmath>

#include "batch_norm_dnnl.h"
#include "conv_nodes.h"
#include "dnnl_accepts.h"
#include "reference_loops.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/conv.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope::ops {
namespace {

// x viewed as (batch, channels, inner): inner is the product of the spatial extents.
struct ChannelLayout {
  std::int64_t batch = 0, channels = 0, inner = 1;
  [[nodiscard]] std::int64_t count() const { return batch * inner; }  // values per channel
  template <class Visit>
  void for_each(std::int64_t c, Visit&& visit) const {
    for (std::int64_t n = 0; n < batch; ++n) {
      const std::int64_t base = (n * channels + c) * inner;
      for (std::int64_t i = 0; i < inner; ++i) visit(static_cast<std::size_t>(base + i));
    }
  }
};

ChannelLayout layout_of(const Dims& x) {
  ChannelLayout layout{x[0], x[1], 1};
  for (int axis = 2; axis < x.rank(); ++axis) layout.inner *= x[axis];
  return layout;
}

double epsilon_of(const Attrs& attrs) { return attrs.get_double("epsilon"); }

// ---- type rules ----

// x: float tensor of rank >= 2; the inputs listed in `vectors`: (C,) of x's dtype.
void check_inputs(const InferContext& ctx,
                  std::string_view label,
                  int x_index,
                  std::initializer_list<int> vectors) {
  const Type& x = ctx.input_type(x_index);
  if (!is_floating(x.dtype) || x.rank() < 2) {
    throw_error(ErrorKind::TypeMismatch, "{}: x {} must be a float tensor of rank >= 2 (N, C, ...)",
                label, x.to_string());
  }
  for (int index : vectors) {
    const Type& v = ctx.input_type(index);
    if (v.dtype != x.dtype || v.rank() != 1) {
      throw_error(ErrorKind::TypeMismatch,
                  "{}: input {} {} must be a {} vector of one value per "
                  "channel",
                  label, index, v.to_string(), dtype_name(x.dtype));
    }
    if (v.dims[0] != kUnknownDim && x.dims[1] != kUnknownDim && v.dims[0] != x.dims[1]) {
      throw_error(ErrorKind::ShapeMismatch, "{}: input {} has {} values but x {} has {} channels",
                  label, index, v.dims[0], x.dims.to_string(), x.dims[1]);
    }
  }
}

Type channel_type(const Type& x) { return Type{x.dtype, Dims{x.dims[1]}}; }

std::vector<Type> infer_train(const InferContext& ctx) {
  check_inputs(ctx, "BatchNormTrain", 0, {1, 2});
  const Type& x = ctx.input_type(0);
  return {x, channel_type(x), channel_type(x)};
}

std::vector<Type> infer_grad(const InferContext& ctx) {
  check_inputs(ctx, "BatchNormGrad", 0, {2, 3, 4});
  const Type& x = ctx.input_type(0);
  const Type& dy = ctx.input_type(1);
  if (dy.dtype != x.dtype || dy.rank() != x.rank()) {
    throw_error(ErrorKind::TypeMismatch, "BatchNormGrad: dy {} must match x {}", dy.to_string(),
                x.to_string());
  }
  return {x, channel_type(x), channel_type(x)};
}

std::vector<Type> infer_inference(const InferContext& ctx) {
  check_inputs(ctx, "BatchNormInference", 0, {1, 2, 3, 4});
  return {ctx.input_type(0)};
}

// Per-channel vectors must hold exactly C values at run time (static dims may have been unknown).
void check_channel_inputs(const KernelContext& ctx,
                          std::string_view label,
                          std::initializer_list<int> vectors) {
  const std::int64_t channels = ctx.input(0).shape()[1];
  for (int index : vectors) {
    if (ctx.input(index).numel() != channels) {
      throw_error(ErrorKind::ShapeMismatch, "{}: input {} has {} values but x {} has {} channels",
                  label, index, ctx.input(index).numel(), ctx.input(0).shape().to_string(),
                  channels);
    }
  }
}

// ---- reference kernels (double accumulation, two passes for the variance) ----

void compute_train_reference(KernelContext& ctx) {
  check_channel_inputs(ctx, "BatchNormTrain", {1, 2});
  const Tensor& x_tensor = ctx.input(0);
  const ChannelLayout l = layout_of(x_tensor.shape());
  const std::vector<double> x = x_tensor.to_doubles();
  const std::vector<double> gamma = ctx.input(1).to_doubles();
  const std::vector<double> beta = ctx.input(2).to_doubles();
  const double epsilon = epsilon_of(*ctx.attrs);
  std::vector<double> y(x.size());
  std::vector<double> mean(static_cast<std::size_t>(l.channels));
  std::vector<double> var(static_cast<std::size_t>(l.channels));
  const auto count = static_cast<double>(l.count());
  for (std::int64_t c = 0; c < l.channels; ++c) {
    const auto ci = static_cast<std::size_t>(c);
    double total = 0;
    l.for_each(c, [&](std::size_t i) { total += x[i]; });
    mean[ci] = total / count;
    double squares = 0;
    l.for_each(c, [&](std::size_t i) { squares += (x[i] - mean[ci]) * (x[i] - mean[ci]); });
    var[ci] = squares / count;
    const double scale = gamma[ci] / std::sqrt(var[ci] + epsilon);
    l.for_each(c, [&](std::size_t i) { y[i] = (x[i] - mean[ci]) * scale + beta[ci]; });
  }
  const DType dtype = x_tensor.dtype();
  detail::store_doubles(ctx.allocate_output(0, dtype, x_tensor.shape()), y);
  detail::store_doubles(ctx.allocate_output(1, dtype, Dims{l.channels}), mean);
  detail::store_doubles(ctx.allocate_output(2, dtype, Dims{l.channels}), var);
}

void compute_grad_reference(KernelContext& ctx) {
  check_channel_inputs(ctx, "BatchNormGrad", {2, 3, 4});
  const Tensor& x_tensor = ctx.input(0);
  const ChannelLayout l = layout_of(x_tensor.shape());
  if (!(ctx.input(1).shape() == x_tensor.shape())) {
    throw_error(ErrorKind::ShapeMismatch, "BatchNormGrad: dy {} must have the shape of x {}",
                ctx.input(1).shape().to_string(), x_tensor.shape().to_string());
  }
  const std::vector<double> x = x_tensor.to_doubles();
  const std::vector<double> dy = ctx.input(1).to_doubles();
  const std::vector<double> gamma = ctx.input(2).to_doubles();
  const std::vector<double> mean = ctx.input(3).to_doubles();
  const std::vector<double> var = ctx.input(4).to_doubles();
  const double epsilon = epsilon_of(*ctx.attrs);
  std::vector<double> dx(x.size());
  std::vector<double> dgamma(static_cast<std::size_t>(l.channels));
  std::vector<double> dbeta(static_cast<std::size_t>(l.channels));
  const auto count = static_cast<double>(l.count());
  for (std::int64_t c = 0; c < l.channels; ++c) {
    const auto ci = static_cast<std::size_t>(c);
    const double inv_std = 1.0 / std::sqrt(var[ci] + epsilon);
    double sum_dy = 0;
    double sum_dy_xhat = 0;
    l.for_each(c, [&](std::size_t i) {
      sum_dy += dy[i];
      sum_dy_xhat += dy[i] * (x[i] - mean[ci]) * inv_std;
    });
    dbeta[ci] = sum_dy;
    dgamma[ci] = sum_dy_xhat;
    // d/dx of (x - mean(x)) / std(x): dy minus its mean and minus its projection on xhat.
    const double scale = gamma[ci] * inv_std / count;
    l.for_each(c, [&](std::size_t i) {
      const double xhat = (x[i] - mean[ci]) * inv_std;
      dx[i] = scale * (count * dy[i] - sum_dy - xhat * sum_dy_xhat);
    });
  }
  const DType dtype = x_tensor.dtype();
  detail::store_doubles(ctx.allocate_output(0, dtype, x_tensor.shape()), dx);
  detail::store_doubles(ctx.allocate_output(1, dtype, Dims{l.channels}), dgamma);
  detail::store_doubles(ctx.allocate_output(2, dtype, Dims{l.channels}), dbeta);
}

void compute_inference_reference(KernelContext& ctx) {
  check_channel_inputs(ctx, "BatchNormInference", {1, 2, 3, 4});
  const Tensor& x_tensor = ctx.input(0);
  const ChannelLayout l = layout_of(x_tensor.shape());
  const std::vector<double> x = x_tensor.to_doubles();
  const std::vector<double> gamma = ctx.input(1).to_doubles();
  const std::vector<double> beta = ctx.input(2).to_doubles();
  const std::vector<double> mean = ctx.input(3).to_doubles();
  const std::vector<double> var = ctx.input(4).to_doubles();
  const double epsilon = epsilon_of(*ctx.attrs);
  std::vector<double> y(x.size());
  for (std::int64_t c = 0; c < l.channels; ++c) {
    const auto ci = static_cast<std::size_t>(c);
    const double scale = gamma[ci] / std::sqrt(var[ci] + epsilon);
    l.for_each(c, [&](std::size_t i) { y[i] = (x[i] - mean[ci]) * scale + beta[ci]; });
  }
  detail::store_doubles(ctx.allocate_output(0, x_tensor.dtype(), x_tensor.shape()), y);
}

// ---- oneDNN kernels (float32, rank 2 to 5; empty tensors and unimplemented shapes fall back) ----

void compute_train_dnnl(KernelContext& ctx) {
  check_channel_inputs(ctx, "BatchNormTrain", {1, 2});
  const Tensor x = ctx.input(0).contiguous();
  const Dims channels{x.shape()[1]};
  Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
  Tensor& mean = ctx.allocate_output(1, x.dtype(), channels);
  Tensor& var = ctx.allocate_output(2, x.dtype(), channels);
  if (x.numel() == 0 ||
      !detail::run_batch_norm_train_dnnl(ctx, epsilon_of(*ctx.attrs), x, ctx.input(1).contiguous(),
                                         ctx.input(2).contiguous(), y, mean, var)) {
    compute_train_reference(ctx);
  }
}

void compute_grad_dnnl(KernelContext& ctx) {
  check_channel_inputs(ctx, "BatchNormGrad", {2, 3, 4});
  const Tensor x = ctx.input(0).contiguous();
  const Tensor dy = ctx.input(1).contiguous();
  if (!(dy.shape() == x.shape()) || x.numel() == 0) {
    compute_grad_reference(ctx);  // reports the mismatch, or handles the empty batch
    return;
  }
  const Dims channels{x.shape()[1]};
  Tensor& dx = ctx.allocate_output(0, x.dtype(), x.shape());
  Tensor& dgamma = ctx.allocate_output(1, x.dtype(), channels);
  Tensor& dbeta = ctx.allocate_output(2, x.dtype(), channels);
  if (!detail::run_batch_norm_grad_dnnl(ctx, epsilon_of(*ctx.attrs), x, dy,
                                        ctx.input(2).contiguous(), ctx.input(3).contiguous(),
                                        ctx.input(4).contiguous(), dx, dgamma, dbeta)) {
    compute_grad_reference(ctx);
  }
}

void compute_inference_dnnl(KernelContext& ctx) {
  check_channel_inputs(ctx, "BatchNormInference", {1, 2, 3, 4});
  const Tensor x = ctx.input(0).contiguous();
  Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
  if (x.numel() == 0 ||
      !detail::run_batch_norm_inference_dnnl(
          ctx, epsilon_of(*ctx.attrs), x, ctx.input(1).contiguous(), ctx.input(2).contiguous(),
          ctx.input(3).contiguous(), ctx.input(4).contiguous(), y)) {
    compute_inference_reference(ctx);
  }
}

bool dnnl_accepts(std::span<const Variable> inputs, std::initializer_list<int> indices) {
  const int rank = inputs[0].rank();
  return rank >= 2 && rank <= 5 && detail::inputs_are_float32(inputs, indices);
}

// ---- gradients ----

std::vector<std::int64_t> statistic_axes(int rank) {
  std::vector<std::int64_t> axes{0};
  for (int axis = 2; axis < rank; ++axis) axes.push_back(axis);
  return axes;
}

std::vector<Variable> pullback_train(const PullbackContext& ctx) {
  const Variable& x = ctx.inputs[0];
  const Variable& mean = ctx.outputs[1];
  std::vector<Variable> grads(3);
  if (ctx.output_grads[0]) {
    grads = apply_op(op_def("BatchNormGrad"),
                     {x, ctx.output_grads[0], ctx.inputs[1], mean, ctx.outputs[2]}, ctx.attrs,
                     std::source_location::current());
  }
  // The statistics are outputs too: mean = sum(x) / M, var = sum((x - mean)^2) / M.
  const Variable& dmean = ctx.output_grads[1];
  const Variable& dvar = ctx.output_grads[2];
  if (dmean || dvar) {
    const Variable count = detail::channel_count(x);
    Variable dx;
    if (dmean) dx = second(x, detail::channel_broadcast(dmean, x.rank()) / count);
    if (dvar) {
      Variable term = detail::channel_broadcast(dvar, x.rank()) * 2.0 *
                      (x - detail::channel_broadcast(mean, x.rank())) / count;
      dx = dx ? dx + term : term;
    }
    grads[0] = grads[0] ? grads[0] + dx : dx;
  }
  return grads;
}

std::vector<Variable> pullback_inference(const PullbackContext& ctx) {
  const Variable& dy = ctx.output_grads[0];
  if (!dy) return std::vector<Variable>(5);
  const Variable& x = ctx.inputs[0];
  const Variable& gamma = ctx.inputs[1];
  const Variable& mean = ctx.inputs[3];
  const Variable& var = ctx.inputs[4];
  const int rank = x.rank();
  const std::vector<std::int64_t> axes = statistic_axes(rank);
  const Variable inv_std = reciprocal(sqrt(var + epsilon_of(ctx.attrs)));
  const Variable centred = x - detail::channel_broadcast(mean, rank);
  const Variable dbeta = sum(dy, axes);
  const Variable dy_centred = sum(dy * centred, axes);
  return {dy * detail::channel_broadcast(gamma * inv_std, rank), dy_centred * inv_std, dbeta,
          -dbeta * gamma * inv_std, dy_centred * gamma * (inv_std * inv_std * inv_std) * -0.5};
}

Cost norm_cost(const CostContext& ctx) {
  const double elements = static_cast<double>(ctx.input_shapes[0].product());
  double bytes = 0;
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  for (const Dims& shape : ctx.input_shapes) bytes += static_cast<double>(shape.product()) * item;
  for (const Dims& shape : ctx.output_shapes) bytes += static_cast<double>(shape.product()) * item;
  // Per element: statistics (3) and normalise-scale-shift (3); the gradient's two sums and its
  // dx expression (7); inference's fused scale and shift (2, after a per-channel precompute).
  const double per_element = ctx.op.name == "BatchNormGrad"    ? 7.0
                             : ctx.op.name == "BatchNormTrain" ? 6.0
                                                               : 2.0;
  return Cost{per_element * elements, bytes};
}

std::string print_norm(const OpDef& op, const Attrs& attrs) {
  return fmt::format("{}{{epsilon={:g}}}", op.name, epsilon_of(attrs));
}

Attrs norm_attrs(double epsilon) { return Attrs{{"epsilon", epsilon}}; }

}  // namespace

namespace detail {
Variable channel_broadcast(const Variable& vector, int rank) {
  std::vector<std::int64_t> pattern(static_cast<std::size_t>(rank), kNewAxis);
  pattern[1] = 0;
  return dimshuffle(vector, pattern);
}

Variable channel_count(const Variable& x) {
  Variable count = shape_i(x, 0);
  for (int axis = 2; axis < x.rank(); ++axis) count = count * shape_i(x, axis);
  return cast(count, x.dtype());
}

std::vector<Variable> batch_norm_train_node(const Variable& x,
                                            const Variable& gamma,
                                            const Variable& beta,
                                            double epsilon,
                                            const std::source_location& location) {
  return apply_op(op_def("BatchNormTrain"), {x, gamma, beta}, norm_attrs(epsilon), location);
}

Variable batch_norm_inference_node(const Variable& x,
                                   const Variable& gamma,
                                   const Variable& beta,
                                   const Variable& mean,
                                   const Variable& var,
                                   double epsilon,
                                   const std::source_location& location) {
  return apply_op1(op_def("BatchNormInference"), {x, gamma, beta, mean, var}, norm_attrs(epsilon),
                   location);
}
}  // namespace detail

void register_batch_norm(OpRegistry& registry) {
  registry.add({.name = "BatchNormTrain",
                .family = "BatchNorm",
                .summary = "batch normalisation with the batch's statistics: y, mean, variance",
                .num_inputs = 3,
                .num_outputs = 3,
                .infer = infer_train,
                .reference = {"ref", compute_train_reference},
                .fast = {"dnnl", compute_train_dnnl,
                         [](std::span<const Variable> inputs, const Attrs&) {
                           return dnnl_accepts(inputs, {0, 1, 2});
                         }},
                .pullback = pullback_train,
                .cost = norm_cost,
                .print = print_norm});
  registry.add({.name = "BatchNormGrad",
                .family = "BatchNormGrad",
                .summary = "gradient of BatchNormTrain's y: dx, dgamma, dbeta",
                .num_inputs = 5,
                .num_outputs = 3,
                .infer = infer_grad,
                .reference = {"ref", compute_grad_reference},
                .fast = {"dnnl", compute_grad_dnnl,
                         [](std::span<const Variable> inputs, const Attrs&) {
                           return dnnl_accepts(inputs, {0, 1, 2, 3, 4});
                         }},
                .cost = norm_cost,
                .print = print_norm});
  registry.add({.name = "BatchNormInference",
                .family = "BatchNorm",
                .summary = "batch normalisation with given statistics",
                .num_inputs = 5,
                .infer = infer_inference,
                .reference = {"ref", compute_inference_reference},
                .fast = {"dnnl", compute_inference_dnnl,
                         [](std::span<const Variable> inputs, const Attrs&) {
                           return dnnl_accepts(inputs, {0, 1, 2, 3, 4});
                         }},
                .pullback = pullback_inference,
                .cost = norm_cost,
                .print = print_norm});
}

}  // namespace tscope::ops
