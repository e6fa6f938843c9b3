// SPDX-License-Identifier: Apache-2.0
#include "conv_dnnl.h"

#include <optional>

#include "dnnl_util.h"

namespace tscope::ops::detail {
namespace {
using dnnl::algorithm;
using dnnl::prop_kind;

struct ConvState final : KernelState {
  Dims x_shape;
  Dims w_shape;
  bool unimplemented = false;
  DnnlCall call;
};

// Grouped weights (O, C/g, k...) are the same bytes as oneDNN's (g, O/g, C/g, k...).
Dims dnnl_weight_dims(const ConvGeometry& g, const Dims& w_shape) {
  if (g.groups == 1) return w_shape;
  Dims dims{g.groups, g.out_channels / g.groups};
  for (int axis = 1; axis < w_shape.rank(); ++axis) dims.push_back(w_shape[axis]);
  return dims;
}

std::optional<DnnlCall> build_call(ConvDirection direction, const ConvGeometry& g,
                                   const Dims& x_shape, const Dims& w_shape, const Dims& y_shape) {
  const dnnl::engine& engine = dnnl_engine();
  const dnnl::memory::desc x_md = dnnl_plain_desc(x_shape);
  const dnnl::memory::desc w_md = dnnl_plain_desc(dnnl_weight_dims(g, w_shape));
  const dnnl::memory::desc y_md = dnnl_plain_desc(y_shape);
  const int rank = g.window.spatial_rank;
  const dnnl::memory::dims strides = dnnl_spatial(g.window.stride, rank);
  const dnnl::memory::dims dilates = dnnl_spatial(g.window.dilation, rank, 1);
  const dnnl::memory::dims pad_l = dnnl_spatial(g.window.pad_begin, rank);
  const dnnl::memory::dims pad_r = dnnl_spatial(g.window.pad_end, rank);
  DnnlCall call;
  try {
    const auto forward_desc = [&](prop_kind kind) {
      return dnnl::convolution_forward::desc(kind, algorithm::convolution_direct, x_md, w_md, y_md,
                                             strides, dilates, pad_l, pad_r);
    };
    if (direction == ConvDirection::Forward) {
      const dnnl::convolution_forward::primitive_desc pd(forward_desc(prop_kind::forward_inference),
                                                         dnnl_attr(), engine);
      call.primitive = dnnl::convolution_forward(pd);
      call.impl = pd.impl_info_str();
      call.args = {{DNNL_ARG_SRC, dnnl_unbound_memory(x_md)},
                   {DNNL_ARG_WEIGHTS, dnnl_unbound_memory(w_md)},
                   {DNNL_ARG_DST, dnnl_unbound_memory(y_md)}};
      dnnl_add_scratchpad(call, pd);
      return call;
    }
    // Backward primitives take the forward (training) descriptor as a hint.
    const dnnl::convolution_forward::primitive_desc hint(forward_desc(prop_kind::forward_training),
                                                         engine);
    if (direction == ConvDirection::BackwardData) {
      const dnnl::convolution_backward_data::primitive_desc pd(
          dnnl::convolution_backward_data::desc(algorithm::convolution_direct, x_md, w_md, y_md,
                                                strides, dilates, pad_l, pad_r),
          dnnl_attr(), engine, hint);
      call.primitive = dnnl::convolution_backward_data(pd);
      call.impl = pd.impl_info_str();
      call.args = {{DNNL_ARG_DIFF_SRC, dnnl_unbound_memory(x_md)},
                   {DNNL_ARG_WEIGHTS, dnnl_unbound_memory(w_md)},
                   {DNNL_ARG_DIFF_DST, dnnl_unbound_memory(y_md)}};
      dnnl_add_scratchpad(call, pd);
      return call;
    }
    const dnnl::convolution_backward_weights::primitive_desc pd(
        dnnl::convolution_backward_weights::desc(algorithm::convolution_direct, x_md, w_md, y_md,
                                                 strides, dilates, pad_l, pad_r),
        dnnl_attr(), engine, hint);
    call.primitive = dnnl::convolution_backward_weights(pd);
    call.impl = pd.impl_info_str();
    call.args = {{DNNL_ARG_SRC, dnnl_unbound_memory(x_md)},
                 {DNNL_ARG_DIFF_WEIGHTS, dnnl_unbound_memory(w_md)},
                 {DNNL_ARG_DIFF_DST, dnnl_unbound_memory(y_md)}};
    dnnl_add_scratchpad(call, pd);
    return call;
  } catch (const dnnl::error& error) {
    if (is_unimplemented(error, "a convolution descriptor")) return std::nullopt;
    throw;
  }
}

int x_arg(ConvDirection direction) {
  return direction == ConvDirection::BackwardData ? DNNL_ARG_DIFF_SRC : DNNL_ARG_SRC;
}
int w_arg(ConvDirection direction) {
  return direction == ConvDirection::BackwardWeights ? DNNL_ARG_DIFF_WEIGHTS : DNNL_ARG_WEIGHTS;
}
int y_arg(ConvDirection direction) {
  return direction == ConvDirection::Forward ? DNNL_ARG_DST : DNNL_ARG_DIFF_DST;
}
}  // namespace

bool run_conv_dnnl(KernelContext& ctx, ConvDirection direction, const ConvGeometry& geometry,
                   const Tensor& x, const Tensor& w, const Tensor& y) {
  auto* state = dynamic_cast<ConvState*>(ctx.state.get());
  if (state == nullptr || !(state->x_shape == x.shape()) || !(state->w_shape == w.shape())) {
    auto fresh = std::make_shared<ConvState>();
    fresh->x_shape = x.shape();
    fresh->w_shape = w.shape();
    std::optional<DnnlCall> call = build_call(direction, geometry, x.shape(), w.shape(), y.shape());
    fresh->unimplemented = !call.has_value();
    if (call) fresh->call = std::move(*call);
    state = fresh.get();
    ctx.state = std::move(fresh);
  }
  if (state->unimplemented) return false;
  dnnl_bind(state->call, x_arg(direction), x.raw_data());
  dnnl_bind(state->call, w_arg(direction), w.raw_data());
  dnnl_bind(state->call, y_arg(direction), y.raw_data());
  dnnl_execute(state->call);
  return true;
}

}  // namespace tscope::ops::detail
