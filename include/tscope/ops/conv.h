// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Convolution, pooling and batch-normalisation builders for 2-D (NCHW) and 3-D (NCDHW) feature
/// maps. Weights are OIHW / OIDHW with I = input channels / groups. Each op has a plain-loop
/// reference kernel and a oneDNN kernel (impl "dnnl", float32 only; float64 runs the reference
/// loops). Batch normalisation is a composite of reductions and elementwise ops.
///
///   Variable x = tensor5(DType::Float32, "x");                        // (N, C, D, H, W)
///   Variable w = shared(weights, "w");                                // (O, C, 3, 3, 3)
///   Variable h = relu(conv3d(x, w, {.padding = Padding::same()}));
///   Variable p = max_pool3d(h, {.kernel = {2, 2, 2}});                // stride defaults to kernel
///   Variable logits = global_avg_pool(p);                             // (N, O, 1, 1, 1)
///
/// The gradients are their own ops, so profiles show them apart: ConvGradW (weights) and ConvGradI
/// (inputs), MaxPoolGrad and AveragePoolGrad. Every one of them is differentiable again.
/// ConvTranspose is ConvGradI under its own name.
#include <cstdint>
#include <source_location>
#include <vector>

#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

/// How much each spatial axis is padded.
struct Padding {
  enum class Mode {
    Explicit,  ///< `begin` / `end` per spatial axis (empty: no padding, "valid")
    Same,      ///< output extent ceil(input / stride); odd totals put the extra pad at the end
    Full,      ///< (kernel - 1) * dilation on both sides
  };
  Mode mode = Mode::Explicit;
  std::vector<std::int64_t> begin;
  std::vector<std::int64_t> end;

  [[nodiscard]] static Padding valid() { return {}; }
  [[nodiscard]] static Padding same() { return {Mode::Same, {}, {}}; }
  [[nodiscard]] static Padding full() { return {Mode::Full, {}, {}}; }
  /// The same padding before and after, per spatial axis.
  [[nodiscard]] static Padding symmetric(std::vector<std::int64_t> pads) {
    return {Mode::Explicit, pads, pads};
  }
  [[nodiscard]] static Padding explicit_pads(std::vector<std::int64_t> begin,
                                             std::vector<std::int64_t> end) {
    return {Mode::Explicit, std::move(begin), std::move(end)};
  }
};

/// Convolution settings; empty lists mean 1 on every spatial axis.
struct ConvOptions {
  std::vector<std::int64_t> strides;
  Padding padding;
  std::vector<std::int64_t> dilations;
  std::int64_t groups = 1;
};

/// Transposed-convolution settings: those of the convolution it transposes (explicit pads only),
/// plus extra extent at the end of each output axis, each smaller than its stride.
struct ConvTransposeOptions {
  std::vector<std::int64_t> strides;
  Padding padding;
  std::vector<std::int64_t> dilations;
  std::int64_t groups = 1;
  std::vector<std::int64_t> output_padding;
};

/// Pooling settings. `kernel` is required; empty `strides` means the kernel (windows that do not
/// overlap, as in Theano's pool_2d). Padded positions never win a max; `include_pad` says whether
/// they count in an average's divisor.
struct PoolOptions {
  std::vector<std::int64_t> kernel;
  std::vector<std::int64_t> strides;
  Padding padding;
  bool include_pad = false;
  /// Keep the partial windows at the end of each axis: the output extent rounds up (ONNX's
  /// ceil_mode, Theano's ignore_border=False), less a last window that would start in the end
  /// padding; the positions past the input's end count as padding.
  bool ceil_mode = false;
};

/// Cross-correlation (no kernel flip, as in every DL framework) of x (N, C, spatial...) with
/// w (O, C / groups, kernel...): output (N, O, out...). Throws TypeMismatch for ranks or dtypes
/// other than two float tensors of rank 4 or 5, ShapeMismatch for static channels that disagree,
/// groups that divide neither C nor O, or a dilated kernel bigger than the padded input, and
/// InvalidArgument for option lists of the wrong length or non-positive values.
Variable conv(const Variable& x, const Variable& w, const ConvOptions& options = {},
              const std::source_location& location = std::source_location::current());
/// conv() of 4-D x and w (throws TypeMismatch for other ranks).
Variable conv2d(const Variable& x, const Variable& w, const ConvOptions& options = {},
                const std::source_location& location = std::source_location::current());
/// conv() of 5-D x and w (throws TypeMismatch for other ranks).
Variable conv3d(const Variable& x, const Variable& w, const ConvOptions& options = {},
                const std::source_location& location = std::source_location::current());

/// The gradient of conv() with respect to w, given x, the output gradient dy and the weights'
/// shape as a 1-D int64 Variable (Theano's AbstractConv_gradWeights).
Variable conv_grad_weights(const Variable& x, const Variable& dy, const Variable& weight_shape,
                           const ConvOptions& options = {},
                           const std::source_location& location = std::source_location::current());
/// The gradient of conv() with respect to x, given w, dy and x's shape as a 1-D int64 Variable
/// (Theano's AbstractConv_gradInputs). The shape is needed because strides drop trailing rows.
Variable conv_grad_inputs(const Variable& w, const Variable& dy, const Variable& input_shape,
                          const ConvOptions& options = {},
                          const std::source_location& location = std::source_location::current());

/// Transposed convolution (ONNX ConvTranspose; "deconvolution"): x (N, C, spatial...) with
/// w (C, O / groups, kernel...) gives (N, O, out...), out = (in - 1) * stride - pad_begin - pad_end
/// + (kernel - 1) * dilation + 1 + output_padding. It is ConvGradI of the convolution with these
/// options, as its own op so profiles name it. Throws like conv(), and InvalidArgument for 'same'
/// or 'full' padding or an output_padding not smaller than its stride.
Variable conv_transpose(const Variable& x, const Variable& w,
                        const ConvTransposeOptions& options = {},
                        const std::source_location& location = std::source_location::current());
Variable conv_transpose2d(const Variable& x, const Variable& w,
                          const ConvTransposeOptions& options = {},
                          const std::source_location& location = std::source_location::current());
Variable conv_transpose3d(const Variable& x, const Variable& w,
                          const ConvTransposeOptions& options = {},
                          const std::source_location& location = std::source_location::current());

/// Max over each window of x (N, C, spatial...), rank 4 or 5.
Variable max_pool(const Variable& x, const PoolOptions& options,
                  const std::source_location& location = std::source_location::current());
Variable max_pool2d(const Variable& x, const PoolOptions& options,
                    const std::source_location& location = std::source_location::current());
Variable max_pool3d(const Variable& x, const PoolOptions& options,
                    const std::source_location& location = std::source_location::current());
/// Average over each window of x, rank 4 or 5.
Variable avg_pool(const Variable& x, const PoolOptions& options,
                  const std::source_location& location = std::source_location::current());
Variable avg_pool2d(const Variable& x, const PoolOptions& options,
                    const std::source_location& location = std::source_location::current());
Variable avg_pool3d(const Variable& x, const PoolOptions& options,
                    const std::source_location& location = std::source_location::current());

/// The gradient of max_pool(): dy routed to each window's maximum (the first one on ties).
Variable max_pool_grad(const Variable& x, const Variable& dy, const PoolOptions& options,
                       const std::source_location& location = std::source_location::current());
/// The gradient of max_pool_grad() with respect to its dy: h read at each window's maximum
/// (Theano's DownsampleFactorMaxGradGrad).
Variable max_pool_grad_grad(const Variable& x, const Variable& h, const PoolOptions& options,
                            const std::source_location& location = std::source_location::current());
/// The gradient of avg_pool(), given dy and x's shape as a 1-D int64 Variable.
Variable avg_pool_grad(const Variable& dy, const Variable& input_shape, const PoolOptions& options,
                       const std::source_location& location = std::source_location::current());

/// Batch-normalisation settings.
struct BatchNormOptions {
  double epsilon = 1e-5;   ///< added to the variance before the square root
  double momentum = 0.1;   ///< weight of the batch statistics in the running averages
};

/// What batch_norm_train() builds. The running averages are new values for the caller to pass as
/// function updates: `{{running_mean, bn.new_running_mean}, {running_var, bn.new_running_var}}`.
struct BatchNormTraining {
  Variable y;                 ///< x normalised with the batch statistics, scaled and shifted
  Variable batch_mean;        ///< (C,)
  Variable batch_var;         ///< (C,) population variance (the one y divides by)
  Variable new_running_mean;  ///< (1 - momentum) * running_mean + momentum * batch_mean
  Variable new_running_var;   ///< the same with the unbiased batch variance (count / (count - 1))
};

/// Batch normalisation in training mode over every axis but 1 of x (N, C, spatial...):
/// (x - mean) / sqrt(var + epsilon) * gamma + beta, with gamma, beta, running_mean and
/// running_var of shape (C,). A composite of reductions and elementwise ops (so it fuses and
/// differentiates like them), named "batch_norm" in profiles. Throws TypeMismatch for ranks below
/// 2 or parameters that are not vectors, ShapeMismatch when their static length is not C.
BatchNormTraining batch_norm_train(
    const Variable& x, const Variable& gamma, const Variable& beta, const Variable& running_mean,
    const Variable& running_var, const BatchNormOptions& options = {},
    const std::source_location& location = std::source_location::current());

/// Batch normalisation in inference mode: the given statistics (usually the running averages)
/// instead of the batch's.
Variable batch_norm_inference(
    const Variable& x, const Variable& gamma, const Variable& beta, const Variable& mean,
    const Variable& var, const BatchNormOptions& options = {},
    const std::source_location& location = std::source_location::current());

/// Mean over every spatial axis of x (N, C, spatial...), keeping them as extent 1 (ONNX's
/// GlobalAveragePool). A composite of mean().
Variable global_avg_pool(const Variable& x,
                         const std::source_location& location = std::source_location::current());

}  // namespace tscope

#pragma GCC visibility pop
