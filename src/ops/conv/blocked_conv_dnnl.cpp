// SPDX-License-Identifier: Apache-2.0
#include "blocked_conv_dnnl.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <optional>

#include "dnnl_util.h"
#include "tscope/graph/apply.h"

namespace tscope::ops::detail {
namespace {
// With Winograd, the primitive reads the weights in its own transformed format: a copy made from
// the packed weights on the first call (and again if the node's weights move), kept here.
// oneDNN reorders into that format only from plain oihw, so the copy goes through it.
struct WinogradWeights {
  dnnl::memory::desc packed_desc;
  dnnl::memory::desc plain_desc;
  dnnl::memory transformed;
  const void* transformed_from = nullptr;
};

void transform_weights(WinogradWeights& weights, const void* packed_data) {
  const dnnl::memory packed(weights.packed_desc, dnnl_engine(), const_cast<void*>(packed_data));
  const dnnl::memory plain(weights.plain_desc, dnnl_engine());
  dnnl_execute({dnnl::reorder(packed, plain), {{DNNL_ARG_FROM, packed}, {DNNL_ARG_TO, plain}}, ""});
  dnnl_execute({dnnl::reorder(plain, weights.transformed),
                {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, weights.transformed}},
                ""});
  weights.transformed_from = packed_data;
}

struct BlockedConvState final : KernelState {
  Dims x_shape;
  bool unimplemented = false;
  DnnlCall call;
  std::optional<WinogradWeights> winograd;
  // Whether the residual is added as a sum post-op onto y, into which it is copied first.
  bool residual_as_sum = false;
};

// A bound as the float oneDNN takes: infinite or beyond float's range becomes the largest float
// of its sign (converting an out-of-range double to float is undefined).
float as_float_bound(double bound) {
  return static_cast<float>(std::clamp(bound, -static_cast<double>(FLT_MAX),
                                       static_cast<double>(FLT_MAX)));
}

constexpr int kResidualArg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1;

// The residual as a binary add (or, for Winograd, which takes no binary post-op, a sum onto the
// destination, into which the residual is copied first), then ReLU when the bounds are [0, inf)
// (oneDNN's cheapest eltwise) or a clip for other bounds (an infinite bound becomes the largest
// float, which no finite float32 value exceeds).
dnnl::post_ops epilogue_post_ops(const ConvEpilogue& epilogue, const dnnl::memory::desc& y_md,
                                 bool residual_as_sum) {
  dnnl::post_ops post_ops;
  if (epilogue.has_residual && residual_as_sum) post_ops.append_sum(1.0F);
  if (epilogue.has_residual && !residual_as_sum) {
    post_ops.append_binary(dnnl::algorithm::binary_add, y_md);
  }
  const bool lower = std::isfinite(epilogue.lower);
  const bool upper = std::isfinite(epilogue.upper);
  if (lower && !upper && epilogue.lower == 0.0) {
    post_ops.append_eltwise(1.0F, dnnl::algorithm::eltwise_relu, 0.0F, 0.0F);
  } else if (lower || upper) {
    post_ops.append_eltwise(1.0F, dnnl::algorithm::eltwise_clip,
                            as_float_bound(epilogue.lower), as_float_bound(epilogue.upper));
  }
  return post_ops;
}

struct BuiltCall {
  DnnlCall call;
  std::optional<WinogradWeights> winograd;
};

// Which convolution algorithm a call runs.
enum class ConvAlgorithm {
  Direct,
  // Winograd F(2x2, 3x3) on weights transformed once into the primitive's own format: 2.25x
  // fewer multiplications plus a transform per tile (figures in docs/conv.md, "Winograd").
  WinogradTransformedWeights,
  // Winograd F(4x4, 3x3) reading the packed weights as they are and transforming them within
  // each call, for weights that change between calls (a training step's).
  WinogradPackedWeights,
};

// The primitive for these shapes and algorithm, or nullopt where oneDNN has none.
std::optional<BuiltCall> build_call(const ConvGeometry& g,
                                    WeightLayout layout,
                                    const ConvEpilogue& epilogue,
                                    ConvAlgorithm algorithm) {
  const bool winograd = algorithm != ConvAlgorithm::Direct;
  const bool transformed = algorithm == ConvAlgorithm::WinogradTransformedWeights;
  const dnnl::memory::desc x_md =
      dnnl_image_desc(g.input_shape(), reads_blocked_input(layout) ? layout.block : 0);
  const dnnl::memory::desc packed_md = dnnl_weight_desc(layout, g.weight_shape(), g.groups, true);
  const dnnl::memory::desc w_md =
      transformed ? dnnl::memory::desc(packed_md.dims(), dnnl::memory::data_type::f32,
                                       dnnl::memory::format_tag::any)
                  : packed_md;
  const dnnl::memory::desc y_md = dnnl_image_desc(g.output_shape(), layout.block);
  const dnnl::memory::desc bias_md =
      epilogue.has_bias ? dnnl::memory::desc({g.out_channels}, dnnl::memory::data_type::f32,
                                             dnnl::memory::format_tag::x)
                        : dnnl::memory::desc();
  const int rank = g.window.spatial_rank;
  dnnl::primitive_attr attr = dnnl_attr();
  attr.set_post_ops(epilogue_post_ops(epilogue, y_md, winograd));
  try {
    // oneDNN's Winograd that reads untransformed weights is its training-time kernel.
    const dnnl::convolution_forward::desc desc(
        algorithm == ConvAlgorithm::WinogradPackedWeights ? dnnl::prop_kind::forward_training
                                                          : dnnl::prop_kind::forward_inference,
        winograd ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct,
        x_md, w_md, bias_md, y_md, dnnl_spatial(g.window.stride, rank),
        dnnl_spatial(g.window.dilation, rank, 1), dnnl_spatial(g.window.pad_begin, rank),
        dnnl_spatial(g.window.pad_end, rank));
    const dnnl::convolution_forward::primitive_desc pd(desc, attr, dnnl_engine());
    BuiltCall built;
    DnnlCall& call = built.call;
    call.primitive = dnnl::convolution_forward(pd);
    call.impl = pd.impl_info_str();
    call.args = {{DNNL_ARG_SRC, dnnl_unbound_memory(x_md)},
                 {DNNL_ARG_DST, dnnl_unbound_memory(y_md)}};
    // The training-time Winograd's scratchpad holds the transformed weights and tiles, often
    // larger than the operands: borrowed from the thread rather than kept by every node.
    if (algorithm == ConvAlgorithm::WinogradPackedWeights) {
      dnnl_add_thread_scratchpad(call, pd);
    } else {
      dnnl_add_scratchpad(call, pd);
    }
    if (transformed) {
      WinogradWeights weights;
      weights.packed_desc = packed_md;
      weights.plain_desc = dnnl_weight_desc(layout, g.weight_shape(), g.groups, false);
      weights.transformed = dnnl::memory(pd.weights_desc(), dnnl_engine());
      call.args.emplace(DNNL_ARG_WEIGHTS, weights.transformed);
      built.winograd = std::move(weights);
    } else {
      call.args.emplace(DNNL_ARG_WEIGHTS, dnnl_unbound_memory(w_md));
    }
    if (epilogue.has_bias) call.args.emplace(DNNL_ARG_BIAS, dnnl_unbound_memory(bias_md));
    if (epilogue.has_residual && !winograd) {
      call.args.emplace(kResidualArg, dnnl_unbound_memory(y_md));
    }
    return built;
  } catch (const dnnl::error& error) {
    if (is_unimplemented(error, "a blocked convolution descriptor")) return std::nullopt;
    throw;
  }
}
}  // namespace

bool run_blocked_conv_dnnl(const KernelContext& ctx, std::shared_ptr<KernelState>& primitive,
                           const ConvGeometry& geometry, WeightLayout layout,
                           const ConvEpilogue& epilogue, bool winograd, const Tensor& x, const Tensor& w,
                           const Tensor* bias, const Tensor* residual, const Tensor& y) {
  auto* state = dynamic_cast<BlockedConvState*>(primitive.get());
  if (state == nullptr || !(state->x_shape == x.shape())) {
    auto fresh = std::make_shared<BlockedConvState>();
    fresh->x_shape = x.shape();
    // Winograd where oneDNN has it for this shape and epilogue (AVX-512), else direct. Constant
    // weights (what use_channel_blocks packs at compile time) are transformed once; others may
    // change in place between calls, so the kernel that transforms them within the call runs.
    const ConvAlgorithm wanted = !winograd ? ConvAlgorithm::Direct
                                 : ctx.input_is_constant(1)
                                     ? ConvAlgorithm::WinogradTransformedWeights
                                     : ConvAlgorithm::WinogradPackedWeights;
    std::optional<BuiltCall> built = build_call(geometry, layout, epilogue, wanted);
    fresh->residual_as_sum = built.has_value() && wanted != ConvAlgorithm::Direct;
    if (!built && wanted != ConvAlgorithm::Direct) {
      built = build_call(geometry, layout, epilogue, ConvAlgorithm::Direct);
    }
    fresh->unimplemented = !built.has_value();
    if (built) {
      fresh->call = std::move(built->call);
      fresh->winograd = std::move(built->winograd);
    }
    state = fresh.get();
    primitive = std::move(fresh);
  }
  if (state->unimplemented) return false;
  if (state->winograd) {
    WinogradWeights& weights = *state->winograd;
    if (weights.transformed_from != w.raw_data()) transform_weights(weights, w.raw_data());
  } else {
    dnnl_bind(state->call, DNNL_ARG_WEIGHTS, w.raw_data());
  }
  if (residual != nullptr && state->residual_as_sum) {
    std::memcpy(y.raw_data(), residual->raw_data(), static_cast<std::size_t>(y.nbytes()));
  } else if (residual != nullptr) {
    dnnl_bind(state->call, kResidualArg, residual->raw_data());
  }
  dnnl_bind(state->call, DNNL_ARG_SRC, x.raw_data());
  if (bias != nullptr) dnnl_bind(state->call, DNNL_ARG_BIAS, bias->raw_data());
  dnnl_bind(state->call, DNNL_ARG_DST, y.raw_data());
  dnnl_execute(state->call);
  return true;
}

}  // namespace tscope::ops::detail
