// SPDX-License-Identifier: Apache-2.0
#include "blocked_conv_dnnl.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <optional>

#include "dnnl_util.h"

namespace tscope::ops::detail {
namespace {
struct BlockedConvState final : KernelState {
  Dims x_shape;
  bool unimplemented = false;
  DnnlCall call;
};

// A bound as the float oneDNN takes: infinite or beyond float's range becomes the largest float
// of its sign (converting an out-of-range double to float is undefined).
float as_float_bound(double bound) {
  return static_cast<float>(std::clamp(bound, -static_cast<double>(FLT_MAX),
                                       static_cast<double>(FLT_MAX)));
}

constexpr int kResidualArg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1;

// The residual as a binary add, then ReLU when the bounds are [0, inf) (oneDNN's cheapest
// eltwise) or a clip for other bounds (an infinite bound becomes the largest float, which no
// finite float32 value exceeds).
dnnl::post_ops epilogue_post_ops(const ConvEpilogue& epilogue, const dnnl::memory::desc& y_md) {
  dnnl::post_ops post_ops;
  if (epilogue.has_residual) post_ops.append_binary(dnnl::algorithm::binary_add, y_md);
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

std::optional<DnnlCall> build_call(const ConvGeometry& g, WeightLayout layout,
                                   const ConvEpilogue& epilogue) {
  const dnnl::memory::desc x_md =
      dnnl_image_desc(g.input_shape(), reads_blocked_input(layout) ? layout.block : 0);
  const dnnl::memory::desc w_md = dnnl_weight_desc(layout, g.weight_shape(), true);
  const dnnl::memory::desc y_md = dnnl_image_desc(g.output_shape(), layout.block);
  const dnnl::memory::desc bias_md =
      epilogue.has_bias ? dnnl::memory::desc({g.out_channels}, dnnl::memory::data_type::f32,
                                             dnnl::memory::format_tag::x)
                        : dnnl::memory::desc();
  const int rank = g.window.spatial_rank;
  dnnl::primitive_attr attr;
  attr.set_post_ops(epilogue_post_ops(epilogue, y_md));
  try {
    const dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, x_md, w_md,
        bias_md, y_md, dnnl_spatial(g.window.stride, rank), dnnl_spatial(g.window.dilation, rank, 1),
        dnnl_spatial(g.window.pad_begin, rank), dnnl_spatial(g.window.pad_end, rank));
    const dnnl::convolution_forward::primitive_desc pd(desc, attr, dnnl_engine());
    DnnlCall call;
    call.primitive = dnnl::convolution_forward(pd);
    call.impl = pd.impl_info_str();
    call.args = {{DNNL_ARG_SRC, dnnl_unbound_memory(x_md)},
                 {DNNL_ARG_WEIGHTS, dnnl_unbound_memory(w_md)},
                 {DNNL_ARG_DST, dnnl_unbound_memory(y_md)}};
    if (epilogue.has_bias) call.args.emplace(DNNL_ARG_BIAS, dnnl_unbound_memory(bias_md));
    if (epilogue.has_residual) call.args.emplace(kResidualArg, dnnl_unbound_memory(y_md));
    return call;
  } catch (const dnnl::error& error) {
    if (is_unimplemented(error, "a blocked convolution descriptor")) return std::nullopt;
    throw;
  }
}
}  // namespace

bool run_blocked_conv_dnnl(KernelContext& ctx, const ConvGeometry& geometry, WeightLayout layout,
                           const ConvEpilogue& epilogue, const Tensor& x, const Tensor& w,
                           const Tensor* bias, const Tensor* residual, const Tensor& y) {
  auto* state = dynamic_cast<BlockedConvState*>(ctx.state.get());
  if (state == nullptr || !(state->x_shape == x.shape())) {
    auto fresh = std::make_shared<BlockedConvState>();
    fresh->x_shape = x.shape();
    std::optional<DnnlCall> call = build_call(geometry, layout, epilogue);
    fresh->unimplemented = !call.has_value();
    if (call) fresh->call = std::move(*call);
    state = fresh.get();
    ctx.state = std::move(fresh);
  }
  if (state->unimplemented) return false;
  dnnl_bind(state->call, DNNL_ARG_SRC, x.raw_data());
  dnnl_bind(state->call, DNNL_ARG_WEIGHTS, w.raw_data());
  if (bias != nullptr) dnnl_bind(state->call, DNNL_ARG_BIAS, bias->raw_data());
  if (residual != nullptr) dnnl_bind(state->call, kResidualArg, residual->raw_data());
  dnnl_bind(state->call, DNNL_ARG_DST, y.raw_data());
  dnnl_execute(state->call);
  return true;
}

}  // namespace tscope::ops::detail
