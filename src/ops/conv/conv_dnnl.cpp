// SPDX-License-Identifier: Apache-2.0
// The primitive is chosen twice: once over the tensors' plain layout, once letting oneDNN pick
// each operand's layout. Over plain tensors oneDNN runs most convolutions as im2col and a gemm;
// given its channel-blocked layouts it runs a direct kernel, which is faster even with the
// operands reordered in and out within the call. The blocked choice is kept when oneDNN picks a
// direct kernel for it; the reorders are then part of the node's time, and their blocked copies
// live only during the call. Activations already stored channel-blocked (the training ops
// use_channel_blocks makes) are bound as they are, and only the plain weights are reordered.
#include "conv_dnnl.h"

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "channel_blocks.h"
#include "dnnl_util.h"

namespace tscope::ops::detail {
namespace {
using dnnl::algorithm;
using dnnl::prop_kind;

// An operand whose tensor is plain but which the primitive reads or writes in another layout.
struct Reordered {
  int arg = 0;
  bool output = false;
  dnnl::memory::desc inner;
  DnnlCall reorder;  // plain -> inner for an input, inner -> plain for an output
};

struct ConvCall {
  DnnlCall call;
  std::vector<Reordered> reordered;
};

struct ConvState final : KernelState {
  Dims x_shape;
  Dims w_shape;
  ConvActivationBlocks blocks;
  bool unimplemented = false;
  ConvCall conv;
};

// Grouped weights (O, C/g, k...) are the same bytes as oneDNN's (g, O/g, C/g, k...).
Dims dnnl_weight_dims(const ConvGeometry& g, const Dims& w_shape) {
  if (g.groups == 1) return w_shape;
  Dims dims{g.groups, g.out_channels / g.groups};
  for (int axis = 1; axis < w_shape.rank(); ++axis) dims.push_back(w_shape[axis]);
  return dims;
}

// The operand descriptors: as stored (plain, or blocked when `block` is not 0), or of any layout
// oneDNN prefers for a plain operand.
dnnl::memory::desc operand_desc(const Dims& shape, bool any_layout, std::int64_t block = 0) {
  if (block != 0) return dnnl_image_desc(shape, block);
  const dnnl::memory::desc plain = dnnl_plain_desc(shape);
  if (!any_layout) return plain;
  return dnnl::memory::desc(plain.dims(), dnnl::memory::data_type::f32,
                            dnnl::memory::format_tag::any);
}

// The primitive's call with every operand bound to an unbound memory of the layout it chose.
std::optional<DnnlCall> build_call(ConvDirection direction,
                                   const ConvGeometry& g,
                                   const Dims& x_shape,
                                   const Dims& w_shape,
                                   const Dims& y_shape,
                                   bool any_layout,
                                   ConvActivationBlocks blocks,
                                   algorithm conv_algorithm = algorithm::convolution_direct) {
  const dnnl::engine& engine = dnnl_engine();
  const dnnl::memory::desc x_md = operand_desc(x_shape, any_layout, blocks.x);
  const dnnl::memory::desc w_md = operand_desc(dnnl_weight_dims(g, w_shape), any_layout);
  const dnnl::memory::desc y_md = operand_desc(y_shape, any_layout, blocks.y);
  const int rank = g.window.spatial_rank;
  const dnnl::memory::dims strides = dnnl_spatial(g.window.stride, rank);
  const dnnl::memory::dims dilates = dnnl_spatial(g.window.dilation, rank, 1);
  const dnnl::memory::dims pad_l = dnnl_spatial(g.window.pad_begin, rank);
  const dnnl::memory::dims pad_r = dnnl_spatial(g.window.pad_end, rank);
  DnnlCall call;
  // Winograd's scratchpad holds transformed weights and tiles, often larger than the operands:
  // borrowed from the thread rather than kept by every node.
  const auto add_scratchpad = [&](DnnlCall& built, const dnnl::primitive_desc_base& pd) {
    if (conv_algorithm == algorithm::convolution_winograd) {
      dnnl_add_thread_scratchpad(built, pd);
    } else {
      dnnl_add_scratchpad(built, pd);
    }
  };
  try {
    const auto forward_desc = [&](prop_kind kind) {
      return dnnl::convolution_forward::desc(kind, conv_algorithm, x_md, w_md, y_md, strides,
                                             dilates, pad_l, pad_r);
    };
    if (direction == ConvDirection::Forward) {
      const dnnl::convolution_forward::primitive_desc pd(forward_desc(prop_kind::forward_inference),
                                                         dnnl_attr(), engine);
      call.primitive = dnnl::convolution_forward(pd);
      call.impl = pd.impl_info_str();
      call.args = {{DNNL_ARG_SRC, dnnl_unbound_memory(pd.src_desc())},
                   {DNNL_ARG_WEIGHTS, dnnl_unbound_memory(pd.weights_desc())},
                   {DNNL_ARG_DST, dnnl_unbound_memory(pd.dst_desc())}};
      add_scratchpad(call, pd);
      return call;
    }
    // Backward primitives take the forward (training) descriptor as a hint.
    const dnnl::convolution_forward::primitive_desc hint(forward_desc(prop_kind::forward_training),
                                                         engine);
    if (direction == ConvDirection::BackwardData) {
      const dnnl::convolution_backward_data::primitive_desc pd(
          dnnl::convolution_backward_data::desc(conv_algorithm, x_md, w_md, y_md, strides, dilates,
                                                pad_l, pad_r),
          dnnl_attr(), engine, hint);
      call.primitive = dnnl::convolution_backward_data(pd);
      call.impl = pd.impl_info_str();
      call.args = {{DNNL_ARG_DIFF_SRC, dnnl_unbound_memory(pd.diff_src_desc())},
                   {DNNL_ARG_WEIGHTS, dnnl_unbound_memory(pd.weights_desc())},
                   {DNNL_ARG_DIFF_DST, dnnl_unbound_memory(pd.diff_dst_desc())}};
      add_scratchpad(call, pd);
      return call;
    }
    const dnnl::convolution_backward_weights::primitive_desc pd(
        dnnl::convolution_backward_weights::desc(conv_algorithm, x_md, w_md, y_md, strides, dilates,
                                                 pad_l, pad_r),
        dnnl_attr(), engine, hint);
    call.primitive = dnnl::convolution_backward_weights(pd);
    call.impl = pd.impl_info_str();
    call.args = {{DNNL_ARG_SRC, dnnl_unbound_memory(pd.src_desc())},
                 {DNNL_ARG_DIFF_WEIGHTS, dnnl_unbound_memory(pd.diff_weights_desc())},
                 {DNNL_ARG_DIFF_DST, dnnl_unbound_memory(pd.diff_dst_desc())}};
    add_scratchpad(call, pd);
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

// The call over the plain layout, or over oneDNN's preferred layouts with reorders where that
// gives a direct kernel instead of a gemm. With blocked activations only the weights' layout is
// left to oneDNN (its blocked kernels want blocked weights).
std::optional<ConvCall> build_conv_call(ConvDirection direction,
                                        const ConvGeometry& g,
                                        const Dims& x_shape,
                                        const Dims& w_shape,
                                        const Dims& y_shape,
                                        ConvActivationBlocks blocks) {
  const bool blocked = blocks.x != 0 || blocks.y != 0;
  std::optional<DnnlCall> plain;
  if (!blocked) {
    plain = build_call(direction, g, x_shape, w_shape, y_shape, false, blocks);
    if (plain && plain->impl.find("gemm") == std::string::npos) return ConvCall{*plain, {}};
  }
  // Winograd reads the weights in a layout of its own, transforms them within the call (a
  // training step's weights change every call) and needs blocked activations.
  std::optional<DnnlCall> chosen;
  if (blocked && blocks.winograd) {
    chosen = build_call(direction, g, x_shape, w_shape, y_shape, true, blocks,
                        algorithm::convolution_winograd);
  }
  if (!chosen) chosen = build_call(direction, g, x_shape, w_shape, y_shape, true, blocks);
  if (!chosen || chosen->impl.find("gemm") != std::string::npos) {
    if (!plain) return std::nullopt;
    return ConvCall{*plain, {}};
  }
  ConvCall conv{*chosen, {}};
  const std::tuple<int, Dims, std::int64_t> operands[] = {
      {x_arg(direction), x_shape, blocks.x},
      {w_arg(direction), dnnl_weight_dims(g, w_shape), 0},
      {y_arg(direction), y_shape, blocks.y}};
  for (const auto& [arg, shape, block] : operands) {
    const dnnl::memory::desc plain_md = operand_desc(shape, false, block);
    dnnl::memory& bound = conv.call.args.at(arg);
    const dnnl::memory::desc inner = bound.get_desc();
    if (inner == plain_md) continue;
    const bool output = arg == (direction == ConvDirection::Forward        ? DNNL_ARG_DST
                                : direction == ConvDirection::BackwardData ? DNNL_ARG_DIFF_SRC
                                                                           : DNNL_ARG_DIFF_WEIGHTS);
    Reordered reordered{arg, output, inner, {}};
    const dnnl::memory plain_memory = dnnl_unbound_memory(plain_md);
    const dnnl::memory inner_memory = dnnl_unbound_memory(inner);
    const dnnl::memory& from = output ? inner_memory : plain_memory;
    const dnnl::memory& to = output ? plain_memory : inner_memory;
    reordered.reorder.primitive = dnnl::reorder(from, to);
    reordered.reorder.args = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    conv.reordered.push_back(std::move(reordered));
  }
  return conv;
}

// Binds `arg` to `data` in the tensor's plain layout: directly, or through a blocked copy made
// for this call (filled from `data` before the primitive for an input).
void bind_operand(ConvCall& conv, int arg, const void* data, std::vector<dnnl::memory>& copies) {
  for (Reordered& reordered : conv.reordered) {
    if (reordered.arg != arg) continue;
    dnnl::memory copy(reordered.inner, dnnl_engine());
    conv.call.args[arg] = copy;
    const int plain_arg = reordered.output ? DNNL_ARG_TO : DNNL_ARG_FROM;
    dnnl_bind(reordered.reorder, plain_arg, data);
    reordered.reorder.args[reordered.output ? DNNL_ARG_FROM : DNNL_ARG_TO] = copy;
    copies.push_back(copy);
    if (!reordered.output) dnnl_execute(reordered.reorder);
    return;
  }
  dnnl_bind(conv.call, arg, data);
}
}  // namespace

bool run_conv_dnnl(KernelContext& ctx,
                   ConvDirection direction,
                   const ConvGeometry& geometry,
                   const Tensor& x,
                   const Tensor& w,
                   const Tensor& y,
                   ConvActivationBlocks blocks) {
  auto* state = dynamic_cast<ConvState*>(ctx.state.get());
  if (state == nullptr || !(state->x_shape == x.shape()) || !(state->w_shape == w.shape()) ||
      state->blocks.x != blocks.x || state->blocks.y != blocks.y ||
      state->blocks.winograd != blocks.winograd) {
    auto fresh = std::make_shared<ConvState>();
    fresh->x_shape = x.shape();
    fresh->w_shape = w.shape();
    fresh->blocks = blocks;
    std::optional<ConvCall> conv =
        build_conv_call(direction, geometry, geometry.input_shape(), geometry.weight_shape(),
                        geometry.output_shape(), blocks);
    fresh->unimplemented = !conv.has_value();
    if (conv) fresh->conv = std::move(*conv);
    state = fresh.get();
    ctx.state = std::move(fresh);
  }
  if (state->unimplemented) return false;
  std::vector<dnnl::memory> copies;
  bind_operand(state->conv, x_arg(direction), x.raw_data(), copies);
  bind_operand(state->conv, w_arg(direction), w.raw_data(), copies);
  bind_operand(state->conv, y_arg(direction), y.raw_data(), copies);
  dnnl_execute(state->conv.call);
  for (Reordered& reordered : state->conv.reordered) {
    if (reordered.output) dnnl_execute(reordered.reorder);
    // Unbound again, so that the copy is freed with `copies` rather than kept by the state.
    state->conv.call.args[reordered.arg] = dnnl_unbound_memory(reordered.inner);
    reordered.reorder.args[reordered.output ? DNNL_ARG_FROM : DNNL_ARG_TO] =
        dnnl_unbound_memory(reordered.inner);
  }
  return true;
}

}  // namespace tscope::ops::detail
