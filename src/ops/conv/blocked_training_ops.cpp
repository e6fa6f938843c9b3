// SPDX-License-Identifier: Apache-2.0
// The training step's ops on channel-blocked (N, C/B, H, W, B) activations (channel_blocks.h),
// made by use_channel_blocks from their plain forms so that a network's activations and their
// gradients stay blocked from one convolution to the next:
// - BlockedConvGradI (w, dy, x_shape) -> dx: ConvGradI with dy and dx blocked;
// - BlockedConvGradW (x, dy, w_shape) -> dw: ConvGradW with dy blocked and x blocked when
//   in_blocked (a first layer with fewer channels than a block reads plain input);
// - BlockedBatchNormTrain (x, gamma, beta) -> y, mean, var and BlockedBatchNormGrad (x, dy,
//   gamma, mean, var) -> dx, dgamma, dbeta: the batch-norm ops with x, y, dy, dx blocked;
// - BlockedMaxPoolGrad (x, dy) -> dx: MaxPoolGrad with all three blocked.
// Also the inference form of batch norm, which imported models (DenseNet's pre-activation
// BatchNorm -> ReLU -> Conv) run between blocked convolutions:
// - BlockedBatchNormInference (x, gamma, beta, mean, var, [x2, x3, ...]) -> y: BatchNormInference
//   with x and y blocked, and with attr relu (fuse_batch_norm_relu) max(y, 0) in the same pass.
//   Inputs after var are further pieces of x along the channel blocks (fuse_join_batch_norm: x is
//   their concatenation, read piece by piece and never built).
// Each keeps its plain form's attrs (plus "block") and inputs, and the shapes given as inputs
// stay plain. Weights stay plain OIHW: they change every step, so the convolution kernels reorder
// them within the call (oneDNN's blocked backward kernels want blocked weights) and ConvGradW's
// result comes back plain for the update. The reference kernels are the plain ops' between
// unblock() and block_into(). Gradient ops without gradients of their own.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "../wide_clones.h"
#include "batch_norm_dnnl.h"
#include "channel_blocks.h"
#include "conv_dnnl.h"
#include "conv_geometry.h"
#include "conv_nodes.h"
#include "dnnl_accepts.h"
#include "pool_dnnl.h"
#include "pool_geometry.h"
#include "reference_loops.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/registry.h"
#include "tscope/threads/parallel_for.h"

namespace tscope::ops {
namespace {
constexpr std::string_view kGradI = "BlockedConvGradI";
constexpr std::string_view kGradW = "BlockedConvGradW";
constexpr std::string_view kNormTrain = "BlockedBatchNormTrain";
constexpr std::string_view kNormGrad = "BlockedBatchNormGrad";
constexpr std::string_view kNormInference = "BlockedBatchNormInference";
constexpr std::string_view kPoolGrad = "BlockedMaxPoolGrad";

void check_float32(const InferContext& ctx,
                   std::initializer_list<int> indices,
                   std::string_view label) {
  for (int i : indices) {
    if (ctx.input_type(i).dtype != DType::Float32) {
      throw_error(ErrorKind::TypeMismatch, "{}: input {} is {}, expects float32", label, i,
                  dtype_name(ctx.input_type(i).dtype));
    }
  }
}

// The plain (N, C, H, W) dims of a blocked input, checked against the node's block.
Dims plain_of(const Dims& blocked, const Attrs& attrs, std::string_view label) {
  const std::int64_t block = detail::check_block_attr(attrs, label);
  detail::check_blocked_dims(blocked, block, label);
  return detail::plain_shape(blocked);
}

bool in_blocked(const Attrs& attrs) { return attrs.get_bool_or("in_blocked", true); }

bool winograd(const Attrs& attrs) { return attrs.get_bool_or("winograd", false); }

// Attr "winograd" (oneDNN's Winograd algorithm where it has one, as BlockedConv's) is for the
// shapes suits_winograd_window allows, on blocked x and dy. A kernel extent not known yet passes;
// the kernel runs the direct algorithm where oneDNN has no Winograd for the shapes it meets.
void check_winograd(const InferContext& ctx, const Dims& w, std::string_view label) {
  if (!winograd(ctx.attrs)) return;
  const bool blocked_x = label == kGradI || in_blocked(ctx.attrs);
  const auto extent = [](std::int64_t k) { return k == kUnknownDim ? 3 : k; };
  if (!blocked_x ||
      !suits_winograd_window(ctx.attrs, ctx.attrs.get_int("block"), extent(w[2]), extent(w[3]))) {
    throw_error(ErrorKind::InvalidArgument,
                "{}: winograd needs blocked x and dy with 16-channel blocks, groups 1, a 3x3 "
                "kernel and strides and dilations 1; got block {} and a {}x{} kernel",
                label, ctx.attrs.get_int("block"), w[2], w[3]);
  }
}

// ---- BlockedConvGradI ----

std::vector<Type> infer_grad_inputs(const InferContext& ctx) {
  check_float32(ctx, {0, 1}, kGradI);
  const Dims x = detail::static_shape_input(ctx.inputs[2], 4, kGradI);
  const Dims dy = plain_of(ctx.input_type(1).dims, ctx.attrs, kGradI);
  const detail::ConvGeometry g =
      detail::conv_geometry(ctx.attrs, x, ctx.input_type(0).dims, kGradI);
  detail::check_conv_output_grad(g, dy, kGradI);
  check_winograd(ctx, ctx.input_type(0).dims, kGradI);
  Dims dims = g.input_shape();
  if (dims[0] == kUnknownDim) dims[0] = dy[0];
  return {Type{DType::Float32, detail::blocked_shape(dims, ctx.attrs.get_int("block"), kGradI)}};
}

detail::ConvGeometry grad_inputs_geometry(const KernelContext& ctx) {
  const Dims x = detail::shape_from_tensor(ctx.input(2), 4, kGradI);
  const detail::ConvGeometry g = detail::conv_geometry(*ctx.attrs, x, ctx.input(0).shape(), kGradI);
  detail::check_conv_output_grad(g, plain_of(ctx.input(1).shape(), *ctx.attrs, kGradI), kGradI);
  return g;
}

void grad_inputs_reference(KernelContext& ctx) {
  const detail::ConvGeometry g = grad_inputs_geometry(ctx);
  const Tensor dx = detail::run_plain_reference(
      ctx, "ConvGradI", *ctx.attrs, {ctx.input(0), detail::unblock(ctx.input(1)), ctx.input(2)})[0];
  Tensor& out = ctx.allocate_output(
      0, DType::Float32,
      detail::blocked_shape(g.input_shape(), ctx.attrs->get_int("block"), kGradI));
  detail::block_into(dx, out);
}

void grad_inputs_dnnl(KernelContext& ctx) {
  const detail::ConvGeometry g = grad_inputs_geometry(ctx);
  const std::int64_t block = ctx.attrs->get_int("block");
  const Tensor w = ctx.input(0).contiguous();
  const Tensor dy = ctx.input(1).contiguous();
  Tensor& dx =
      ctx.allocate_output(0, DType::Float32, detail::blocked_shape(g.input_shape(), block, kGradI));
  const bool empty = dx.numel() == 0 || w.numel() == 0 || dy.numel() == 0;
  if (empty || !detail::run_conv_dnnl(ctx, detail::ConvDirection::BackwardData, g, dx, w, dy,
                                      {block, block, winograd(*ctx.attrs)})) {
    grad_inputs_reference(ctx);
  }
}

// ---- BlockedConvGradW ----

Dims grad_weights_x(const Dims& x, const Attrs& attrs) {
  return in_blocked(attrs) ? plain_of(x, attrs, kGradW) : x;
}

std::vector<Type> infer_grad_weights(const InferContext& ctx) {
  check_float32(ctx, {0, 1}, kGradW);
  const Dims w = detail::static_shape_input(ctx.inputs[2], 4, kGradW);
  const Dims dy = plain_of(ctx.input_type(1).dims, ctx.attrs, kGradW);
  const detail::ConvGeometry g = detail::conv_geometry(
      ctx.attrs, grad_weights_x(ctx.input_type(0).dims, ctx.attrs), w, kGradW);
  detail::check_conv_output_grad(g, dy, kGradW);
  check_winograd(ctx, w, kGradW);
  Dims dims = g.weight_shape();
  if (dims[0] == kUnknownDim) dims[0] = dy[1];
  if (dims[1] == kUnknownDim) dims[1] = w[1];
  return {Type{DType::Float32, dims}};
}

detail::ConvGeometry grad_weights_geometry(const KernelContext& ctx) {
  const Dims w = detail::shape_from_tensor(ctx.input(2), 4, kGradW);
  const detail::ConvGeometry g = detail::conv_geometry(
      *ctx.attrs, grad_weights_x(ctx.input(0).shape(), *ctx.attrs), w, kGradW);
  detail::check_conv_output_grad(g, plain_of(ctx.input(1).shape(), *ctx.attrs, kGradW), kGradW);
  return g;
}

void grad_weights_reference(KernelContext& ctx) {
  grad_weights_geometry(ctx);
  const Tensor x = in_blocked(*ctx.attrs) ? detail::unblock(ctx.input(0)) : ctx.input(0);
  const Tensor dw = detail::run_plain_reference(
      ctx, "ConvGradW", *ctx.attrs, {x, detail::unblock(ctx.input(1)), ctx.input(2)})[0];
  detail::store_doubles(ctx.allocate_output(0, DType::Float32, dw.shape()), dw.to_doubles());
}

void grad_weights_dnnl(KernelContext& ctx) {
  const detail::ConvGeometry g = grad_weights_geometry(ctx);
  const std::int64_t block = ctx.attrs->get_int("block");
  const Tensor x = ctx.input(0).contiguous();
  const Tensor dy = ctx.input(1).contiguous();
  Tensor& dw = ctx.allocate_output(0, DType::Float32, g.weight_shape());
  const bool empty = dw.numel() == 0 || x.numel() == 0 || dy.numel() == 0;
  if (empty ||
      !detail::run_conv_dnnl(ctx, detail::ConvDirection::BackwardWeights, g, x, dw, dy,
                             {in_blocked(*ctx.attrs) ? block : 0, block, winograd(*ctx.attrs)})) {
    grad_weights_reference(ctx);
  }
}

// Same cost as the plain ops: the flops of the convolution and the bytes of the operands.
Cost conv_grad_cost(const CostContext& ctx) {
  const bool grad_inputs = ctx.op.name == kGradI;
  const Dims dy = detail::plain_shape(ctx.input_shapes[1]);
  const Dims w = grad_inputs ? ctx.input_shapes[0] : ctx.output_shapes[0];
  const double elements =
      static_cast<double>(ctx.input_shapes[0].product() + ctx.input_shapes[1].product() +
                          ctx.output_shapes[0].product());
  return Cost{detail::conv_flops(dy, w), elements * 4.0};
}

// "Conv2dGradI{stride=(1,1),pad=(1,1),dilation=(1,1),groups=1,nChw16c}".
std::string print_conv_grad(const OpDef& op, const Attrs& attrs) {
  std::string name = detail::conv_printed_name(op.name == kGradI ? "GradI" : "GradW", attrs);
  name.pop_back();
  const std::int64_t block = attrs.get_int("block");
  const bool plain_x = op.name == kGradW && !in_blocked(attrs);
  return name + (plain_x ? fmt::format(",nchw+nChw{}c", block) : fmt::format(",nChw{}c", block)) +
         (winograd(attrs) ? ",winograd}" : "}");
}

bool float32_inputs(std::span<const Variable> inputs, const Attrs&) {
  return detail::inputs_are_float32(inputs, {0, 1});
}

// ---- BlockedBatchNormTrain / BlockedBatchNormGrad ----

void check_channel_vectors(const InferContext& ctx,
                           std::int64_t channels,
                           std::initializer_list<int> indices,
                           std::string_view label) {
  for (int i : indices) {
    const Dims& v = ctx.input_type(i).dims;
    if (v.rank() != 1 || (v[0] != kUnknownDim && channels != kUnknownDim && v[0] != channels)) {
      throw_error(ErrorKind::ShapeMismatch, "{}: input {} {} for {} channels", label, i,
                  v.to_string(), channels);
    }
  }
}

std::vector<Type> infer_norm_train(const InferContext& ctx) {
  check_float32(ctx, {0, 1, 2}, kNormTrain);
  const Dims x = plain_of(ctx.input_type(0).dims, ctx.attrs, kNormTrain);
  check_channel_vectors(ctx, x[1], {1, 2}, kNormTrain);
  const Type channels{DType::Float32, Dims{x[1]}};
  return {ctx.input_type(0), channels, channels};
}

std::vector<Type> infer_norm_grad(const InferContext& ctx) {
  check_float32(ctx, {0, 1, 2, 3, 4}, kNormGrad);
  const Dims x = plain_of(ctx.input_type(0).dims, ctx.attrs, kNormGrad);
  const Dims dy = plain_of(ctx.input_type(1).dims, ctx.attrs, kNormGrad);
  if (dy.rank() != x.rank()) {
    throw_error(ErrorKind::ShapeMismatch, "{}: dy {} must match x {}", kNormGrad, dy.to_string(),
                x.to_string());
  }
  check_channel_vectors(ctx, x[1], {2, 3, 4}, kNormGrad);
  const Type channels{DType::Float32, Dims{x[1]}};
  return {ctx.input_type(0), channels, channels};
}

// BlockedBatchNormInference's x: input 0, followed along the channel blocks by inputs 5...
// (fuse_join_batch_norm's pieces of a concatenation), or none.
std::vector<int> piece_indices(int num_inputs) {
  std::vector<int> pieces{0};
  for (int i = 5; i < num_inputs; ++i) pieces.push_back(i);
  return pieces;
}

std::vector<Type> infer_norm_inference(const InferContext& ctx) {
  if (ctx.num_inputs() < 5) {
    throw_error(ErrorKind::InvalidArgument,
                "{}: takes x, gamma, beta, mean, var and further pieces of x; got {} inputs",
                kNormInference, ctx.num_inputs());
  }
  check_float32(ctx, {1, 2, 3, 4}, kNormInference);
  Dims dims = ctx.input_type(0).dims;
  for (const int i : piece_indices(ctx.num_inputs())) {
    check_float32(ctx, {i}, kNormInference);
    const Dims& piece = ctx.input_type(i).dims;
    plain_of(piece, ctx.attrs, kNormInference);
    if (i == 0) continue;
    for (int axis = 0; axis < 5; ++axis) {
      if (axis == 1) {
        dims[1] =
            dims[1] == kUnknownDim || piece[1] == kUnknownDim ? kUnknownDim : dims[1] + piece[1];
      } else if (dims[axis] != piece[axis] && dims[axis] != kUnknownDim &&
                 piece[axis] != kUnknownDim) {
        throw_error(ErrorKind::ShapeMismatch, "{}: pieces of x {} and {} differ on axis {}",
                    kNormInference, ctx.input_type(0).dims.to_string(), piece.to_string(), axis);
      }
    }
  }
  check_channel_vectors(ctx, detail::plain_shape(dims)[1], {1, 2, 3, 4}, kNormInference);
  return {Type{DType::Float32, dims}};
}

bool fused_relu(const Attrs& attrs) { return attrs.get_bool_or("relu", false); }

// Runs the plain op's reference on the unblocked tensors and stores its outputs: the first
// blocked like x, the per-channel vectors as they are.
void norm_reference(KernelContext& ctx, std::string_view plain_op, int blocked_inputs) {
  std::vector<Tensor> inputs;
  for (int i = 0; i < ctx.num_inputs; ++i) {
    inputs.push_back(i < blocked_inputs ? detail::unblock(ctx.input(i)) : ctx.input(i));
  }
  const std::vector<Tensor> outputs =
      detail::run_plain_reference(ctx, plain_op, *ctx.attrs, inputs);
  Tensor& y = ctx.allocate_output(0, DType::Float32, ctx.input(0).shape());
  detail::block_into(outputs[0], y);
  for (int i = 1; i < 3; ++i) {
    const Tensor& vector = outputs[static_cast<std::size_t>(i)];
    detail::store_doubles(ctx.allocate_output(i, DType::Float32, vector.shape()),
                          vector.to_doubles());
  }
}

void norm_train_reference(KernelContext& ctx) { norm_reference(ctx, "BatchNormTrain", 1); }
void norm_grad_reference(KernelContext& ctx) { norm_reference(ctx, "BatchNormGrad", 2); }

// BatchNormInference's reference on the unblocked x (its pieces joined by Join's reference),
// then max(y, 0) with relu, blocked again.
void norm_inference_reference(KernelContext& ctx) {
  std::vector<Tensor> pieces;
  for (const int i : piece_indices(ctx.num_inputs)) pieces.push_back(detail::unblock(ctx.input(i)));
  Tensor x = pieces[0];
  if (pieces.size() > 1) {
    x = detail::run_plain_reference(ctx, "Join", Attrs{{"axis", std::int64_t{1}}}, pieces)[0];
  }
  std::vector<Tensor> inputs{x};
  for (int i = 1; i < 5; ++i) inputs.push_back(ctx.input(i));
  const std::vector<Tensor> outputs =
      detail::run_plain_reference(ctx, "BatchNormInference", *ctx.attrs, inputs);
  Tensor y = outputs[0];
  if (fused_relu(*ctx.attrs)) {
    std::vector<double> values = y.to_doubles();
    for (double& value : values) value = std::max(value, 0.0);
    y = Tensor::zeros(DType::Float32, y.shape());
    detail::store_doubles(y, values);
  }
  const std::int64_t block = ctx.attrs->get_int("block");
  Tensor& out = ctx.allocate_output(0, DType::Float32,
                                    detail::blocked_shape(y.shape(), block, kNormInference));
  detail::block_into(y, out);
}

// The per-channel scale gamma / sqrt(var + epsilon) and shift beta - mean * scale, computed in
// double as the reference does; kept across calls when all four vectors are constants.
struct ChannelAffine final : KernelState {
  std::vector<float> scale, shift;
};

void channel_affine(const KernelContext& ctx, std::int64_t channels, ChannelAffine& affine) {
  const double epsilon = ctx.attrs->get_double("epsilon");
  const std::vector<double> gamma = ctx.input(1).to_doubles();
  const std::vector<double> beta = ctx.input(2).to_doubles();
  const std::vector<double> mean = ctx.input(3).to_doubles();
  const std::vector<double> var = ctx.input(4).to_doubles();
  affine.scale.resize(static_cast<std::size_t>(channels));
  affine.shift.resize(static_cast<std::size_t>(channels));
  for (std::size_t c = 0; c < static_cast<std::size_t>(channels); ++c) {
    const double scale = gamma[c] / std::sqrt(var[c] + epsilon);
    affine.scale[c] = static_cast<float>(scale);
    affine.shift[c] = static_cast<float>(beta[c] - mean[c] * scale);
  }
}

struct AffineRows {
  const float* in;
  float* out;
  const float* scale;
  const float* shift;
  std::int64_t pixels;   // H * W: rows of one channel block of one image
  std::int64_t cblocks;  // channel blocks of `in` per image
};

// Rows [first, last) of B values (one pixel of one channel block): y = x * scale + shift, then
// max(y, 0) with Relu. Runs of rows share a channel block, whose scale and shift stay in
// registers; B is a constant, so each row is one or two vector operations.
template <std::int64_t B, bool Relu>
[[gnu::always_inline]] inline void affine_rows(const AffineRows& a,
                                               std::int64_t first,
                                               std::int64_t last) {
  std::int64_t row = first;
  while (row < last) {
    const std::int64_t plane = row / a.pixels;  // n * cblocks + cb
    const std::int64_t end = std::min(last, (plane + 1) * a.pixels);
    const float* scale = a.scale + (plane % a.cblocks) * B;
    const float* shift = a.shift + (plane % a.cblocks) * B;
    float s[B];
    float t[B];
    for (std::int64_t j = 0; j < B; ++j) {
      s[j] = scale[j];
      t[j] = shift[j];
    }
    for (; row < end; ++row) {
      const float* __restrict in = a.in + row * B;
      float* __restrict out = a.out + row * B;
      for (std::int64_t j = 0; j < B; ++j) {
        const float y = in[j] * s[j] + t[j];
        out[j] = Relu ? (y < 0.0f ? 0.0f : y) : y;  // NaN stays NaN, as in max(y, 0)
      }
    }
  }
}

TSCOPE_WIDE_CLONES void affine_rows_any(
    const AffineRows& a, std::int64_t block, bool relu, std::int64_t first, std::int64_t last) {
  if (block == 16) {
    relu ? affine_rows<16, true>(a, first, last) : affine_rows<16, false>(a, first, last);
  } else {
    relu ? affine_rows<8, true>(a, first, last) : affine_rows<8, false>(a, first, last);
  }
}

#undef TSCOPE_WIDE_CLONES

// One pass over x: the per-channel scale and shift (for B = 8 or 16), then ReLU when fused. With
// pieces, each piece's channel blocks are read where they are and written to their place in y,
// so the concatenation is never built.
void norm_inference_cpu(KernelContext& ctx) {
  const std::int64_t block = ctx.attrs->get_int("block");
  std::vector<Tensor> pieces;
  Dims dims = ctx.input(0).shape();
  bool valid = dims.rank() == 5 && dims[4] == block;
  if (valid) dims[1] = 0;
  for (const int i : piece_indices(ctx.num_inputs)) {
    pieces.push_back(ctx.input(i).contiguous());
    const Dims& piece = pieces.back().shape();
    valid = valid && piece.rank() == 5;
    for (int axis = 0; valid && axis < 5; ++axis) valid = axis == 1 || piece[axis] == dims[axis];
    if (valid) dims[1] += piece[1];
  }
  const std::int64_t channels = valid ? dims[1] * block : -1;
  for (int i = 1; i < 5; ++i) valid = valid && ctx.input(i).numel() == channels;
  if (!valid) {
    norm_inference_reference(ctx);  // reports the mismatch
    return;
  }
  Tensor& y = ctx.allocate_output(0, DType::Float32, dims);
  if (y.numel() == 0) return;
  bool constant = true;
  for (int i = 1; i < 5; ++i) constant = constant && ctx.input_is_constant(i);
  auto* affine = dynamic_cast<ChannelAffine*>(ctx.state.get());
  ChannelAffine fresh;
  if (affine == nullptr || !constant) {
    if (constant) {
      auto kept = std::make_shared<ChannelAffine>();
      ctx.state = kept;
      affine = kept.get();
    } else {
      affine = &fresh;
    }
    channel_affine(ctx, channels, *affine);
  }
  const bool relu = fused_relu(*ctx.attrs);
  const std::int64_t pixels = dims[2] * dims[3];
  const std::int64_t image_rows = dims[1] * pixels;  // rows of y per image
  // Chunk boundaries are multiples of 16 elements, so each chunk holds whole rows of y: the rows
  // of each (image, piece) it meets, read from the piece.
  threads::for_each_chunk(y.numel(), [&](std::int64_t begin, std::int64_t end) {
    const std::int64_t first = begin / block;
    const std::int64_t last = end / block;
    for (std::int64_t n = first / image_rows; n * image_rows < last; ++n) {
      std::int64_t offset = 0;  // the piece's first channel block in y
      for (const Tensor& piece : pieces) {
        const std::int64_t cblocks = piece.shape()[1];
        const std::int64_t start = n * image_rows + offset * pixels;  // its rows in y
        const std::int64_t from = std::max(first, start);
        const std::int64_t to = std::min(last, start + cblocks * pixels);
        if (from < to) {
          // Row q of this image's part of the piece is row start + q of y.
          const AffineRows rows{
              static_cast<const float*>(piece.raw_data()) + n * cblocks * pixels * block,
              static_cast<float*>(y.raw_data()) + start * block,
              affine->scale.data() + offset * block,
              affine->shift.data() + offset * block,
              pixels,
              cblocks};
          affine_rows_any(rows, block, relu, from - start, to - start);
        }
        offset += cblocks;
      }
    }
  });
}

void norm_train_dnnl(KernelContext& ctx) {
  const Tensor x = ctx.input(0).contiguous();
  const Dims channels{detail::plain_shape(x.shape())[1]};
  Tensor& y = ctx.allocate_output(0, DType::Float32, x.shape());
  Tensor& mean = ctx.allocate_output(1, DType::Float32, channels);
  Tensor& var = ctx.allocate_output(2, DType::Float32, channels);
  if (x.numel() == 0 || ctx.input(1).numel() != channels[0] ||
      !detail::run_batch_norm_train_dnnl(ctx, ctx.attrs->get_double("epsilon"), x,
                                         ctx.input(1).contiguous(), ctx.input(2).contiguous(), y,
                                         mean, var, ctx.attrs->get_int("block"))) {
    norm_train_reference(ctx);
  }
}

void norm_grad_dnnl(KernelContext& ctx) {
  const Tensor x = ctx.input(0).contiguous();
  const Tensor dy = ctx.input(1).contiguous();
  const Dims channels{detail::plain_shape(x.shape())[1]};
  if (!(dy.shape() == x.shape()) || x.numel() == 0 || ctx.input(2).numel() != channels[0]) {
    norm_grad_reference(ctx);  // reports the mismatch, or handles the empty batch
    return;
  }
  Tensor& dx = ctx.allocate_output(0, DType::Float32, x.shape());
  Tensor& dgamma = ctx.allocate_output(1, DType::Float32, channels);
  Tensor& dbeta = ctx.allocate_output(2, DType::Float32, channels);
  if (!detail::run_batch_norm_grad_dnnl(ctx, ctx.attrs->get_double("epsilon"), x, dy,
                                        ctx.input(2).contiguous(), ctx.input(3).contiguous(),
                                        ctx.input(4).contiguous(), dx, dgamma, dbeta,
                                        ctx.attrs->get_int("block"))) {
    norm_grad_reference(ctx);
  }
}

Cost norm_cost(const CostContext& ctx) {
  // y has x's elements (all its pieces' for a concatenation's norm).
  const double elements = static_cast<double>(ctx.output_shapes[0].product());
  double bytes = 0;
  for (const Dims& shape : ctx.input_shapes) bytes += static_cast<double>(shape.product()) * 4.0;
  for (const Dims& shape : ctx.output_shapes) bytes += static_cast<double>(shape.product()) * 4.0;
  // As the plain ops count: statistics and normalisation (6), the gradient's sums and dx (7),
  // inference's fused scale and shift (2), and its ReLU (1).
  const double per_element = ctx.op.name == kNormGrad        ? 7.0
                             : ctx.op.name == kNormInference ? (fused_relu(ctx.attrs) ? 3.0 : 2.0)
                                                             : 6.0;
  return Cost{per_element * elements, bytes};
}

std::string print_norm(const OpDef& op, const Attrs& attrs) {
  const std::string_view plain = op.name == kNormGrad        ? "BatchNormGrad"
                                 : op.name == kNormInference ? "BatchNormInference"
                                                             : "BatchNormTrain";
  return fmt::format("{}{{epsilon={:g},nChw{}c{}}}", plain, attrs.get_double("epsilon"),
                     attrs.get_int("block"), fused_relu(attrs) ? ",relu" : "");
}

bool norm_float32(std::span<const Variable> inputs, const Attrs&) {
  return detail::inputs_are_float32(inputs, {0, 1, 2});
}

bool norm_inference_float32(std::span<const Variable> inputs, const Attrs&) {
  return detail::inputs_are_float32(inputs, {0, 1, 2, 3, 4});
}

// ---- BlockedMaxPoolGrad ----

std::vector<Type> infer_pool_grad(const InferContext& ctx) {
  check_float32(ctx, {0, 1}, kPoolGrad);
  const detail::PoolGeometry g = detail::pool_geometry(
      ctx.attrs, plain_of(ctx.input_type(0).dims, ctx.attrs, kPoolGrad), kPoolGrad);
  detail::check_pool_output_shape(g, plain_of(ctx.input_type(1).dims, ctx.attrs, kPoolGrad), "dy",
                                  kPoolGrad);
  return {ctx.input_type(0)};
}

detail::PoolGeometry pool_grad_geometry(const KernelContext& ctx) {
  const detail::PoolGeometry g = detail::pool_geometry(
      *ctx.attrs, plain_of(ctx.input(0).shape(), *ctx.attrs, kPoolGrad), kPoolGrad);
  detail::check_pool_output_shape(g, plain_of(ctx.input(1).shape(), *ctx.attrs, kPoolGrad), "dy",
                                  kPoolGrad);
  return g;
}

void pool_grad_reference(KernelContext& ctx) {
  pool_grad_geometry(ctx);
  const Tensor dx = detail::run_plain_reference(
      ctx, "MaxPoolGrad", *ctx.attrs,
      {detail::unblock(ctx.input(0)), detail::unblock(ctx.input(1))})[0];
  Tensor& out = ctx.allocate_output(0, DType::Float32, ctx.input(0).shape());
  detail::block_into(dx, out);
}

void pool_grad_dnnl(KernelContext& ctx) {
  const detail::PoolGeometry g = pool_grad_geometry(ctx);
  const Tensor x = ctx.input(0).contiguous();
  const Tensor dy = ctx.input(1).contiguous();
  Tensor& dx = ctx.allocate_output(0, DType::Float32, x.shape());
  if (dy.numel() == 0 ||
      !detail::run_max_pool_backward_dnnl(ctx, g, x, dy, dx, ctx.attrs->get_int("block"))) {
    pool_grad_reference(ctx);
  }
}

Cost pool_grad_cost(const CostContext& ctx) {
  double elements = static_cast<double>(ctx.output_shapes[0].product());
  for (const Dims& shape : ctx.input_shapes) elements += static_cast<double>(shape.product());
  return Cost{detail::pool_flops(detail::plain_shape(ctx.input_shapes[1]), ctx.attrs),
              elements * 4.0};
}

std::string print_pool_grad(const OpDef&, const Attrs& attrs) {
  std::string name = detail::pool_printed_name("MaxPool", "Grad", attrs);
  name.pop_back();
  return name + fmt::format(",nChw{}c}}", attrs.get_int("block"));
}
}  // namespace

void register_blocked_training_ops(OpRegistry& registry) {
  registry.add({.name = kGradI,
                .family = "ConvGradI",
                .summary = "ConvGradI with dy and dx channel-blocked (N, C/B, H, W, B)",
                .num_inputs = 3,
                .infer = infer_grad_inputs,
                .reference = {"ref", grad_inputs_reference},
                .fast = {"dnnl", grad_inputs_dnnl, float32_inputs},
                .cost = conv_grad_cost,
                .print = print_conv_grad});
  registry.add({.name = kGradW,
                .family = "ConvGradW",
                .summary = "ConvGradW with dy (and x unless in_blocked=false) channel-blocked",
                .num_inputs = 3,
                .infer = infer_grad_weights,
                .reference = {"ref", grad_weights_reference},
                .fast = {"dnnl", grad_weights_dnnl, float32_inputs},
                .cost = conv_grad_cost,
                .print = print_conv_grad});
  registry.add({.name = kNormTrain,
                .family = "BatchNorm",
                .summary = "BatchNormTrain on channel-blocked x: y (blocked), mean, variance",
                .num_inputs = 3,
                .num_outputs = 3,
                .infer = infer_norm_train,
                .reference = {"ref", norm_train_reference},
                .fast = {"dnnl", norm_train_dnnl, norm_float32},
                .cost = norm_cost,
                .print = print_norm});
  registry.add({.name = kNormGrad,
                .family = "BatchNormGrad",
                .summary = "BatchNormGrad on channel-blocked x and dy: dx (blocked), dgamma, dbeta",
                .num_inputs = 5,
                .num_outputs = 3,
                .infer = infer_norm_grad,
                .reference = {"ref", norm_grad_reference},
                .fast = {"dnnl", norm_grad_dnnl, norm_float32},
                .cost = norm_cost,
                .print = print_norm});
  registry.add({.name = kNormInference,
                .family = "BatchNorm",
                .summary = "BatchNormInference on channel-blocked x: y (blocked), ReLU fused on "
                           "request (attr relu)",
                .num_inputs = -1,
                .infer = infer_norm_inference,
                .reference = {"ref", norm_inference_reference},
                .fast = {"cpu", norm_inference_cpu, norm_inference_float32},
                .cost = norm_cost,
                .print = print_norm});
  registry.add({.name = kPoolGrad,
                .family = "MaxPoolGrad",
                .summary = "MaxPoolGrad on channel-blocked x and dy: dx (blocked)",
                .num_inputs = 2,
                .infer = infer_pool_grad,
                .reference = {"ref", pool_grad_reference},
                .fast = {"dnnl", pool_grad_dnnl, float32_inputs},
                .cost = pool_grad_cost,
                .print = print_pool_grad});
}

}  // namespace tscope::ops
