// SPDX-License-Identifier: Apache-2.0
#include "pool_dnnl.h"

#include <optional>

#include "channel_blocks.h"
#include "dnnl_util.h"

namespace tscope::ops::detail {
namespace {
using dnnl::prop_kind;

enum class PoolPass { Forward, AverageBackward, MaxBackward };

struct PoolState final : KernelState {
  Dims x_shape;
  bool unimplemented = false;
  DnnlCall forward;
  DnnlCall backward;  ///< backward passes only
};

dnnl::algorithm pool_algorithm(PoolKind kind) {
  switch (kind) {
    case PoolKind::Max: return dnnl::algorithm::pooling_max;
    case PoolKind::AverageIncludePad: return dnnl::algorithm::pooling_avg_include_padding;
    case PoolKind::AverageExcludePad: break;
  }
  return dnnl::algorithm::pooling_avg_exclude_padding;
}

bool build_calls(PoolPass pass, PoolKind kind, const PoolGeometry& g, std::int64_t channel_block,
                 PoolState& state) {
  const dnnl::engine& engine = dnnl_engine();
  const dnnl::memory::desc x_md = dnnl_image_desc(g.input_shape(), channel_block);
  const dnnl::memory::desc y_md = dnnl_image_desc(g.output_shape(), channel_block);
  const int rank = g.window.spatial_rank;
  const dnnl::memory::dims strides = dnnl_spatial(g.window.stride, rank);
  const dnnl::memory::dims kernel = dnnl_spatial(g.window.kernel, rank);
  const dnnl::memory::dims pad_l = dnnl_spatial(g.window.pad_begin, rank);
  const dnnl::memory::dims pad_r = dnnl_spatial(g.window.pad_end, rank);
  const dnnl::algorithm algorithm = pool_algorithm(kind);
  try {
    const prop_kind forward_kind =
        pass == PoolPass::Forward ? prop_kind::forward_inference : prop_kind::forward_training;
    const dnnl::pooling_forward::primitive_desc forward_pd(
        dnnl::pooling_forward::desc(forward_kind, algorithm, x_md, y_md, strides, kernel, pad_l,
                                    pad_r),
        dnnl_attr(), engine);
    if (pass != PoolPass::AverageBackward) {
      state.forward.primitive = dnnl::pooling_forward(forward_pd);
      state.forward.impl = forward_pd.impl_info_str();
      state.forward.args = {{DNNL_ARG_SRC, dnnl_unbound_memory(x_md)},
                            {DNNL_ARG_DST, dnnl_unbound_memory(y_md)}};
      dnnl_add_scratchpad(state.forward, forward_pd);
    }
    if (pass == PoolPass::Forward) return true;
    const dnnl::pooling_backward::primitive_desc backward_pd(
        dnnl::pooling_backward::desc(algorithm, x_md, y_md, strides, kernel, pad_l, pad_r),
        dnnl_attr(), engine, forward_pd);
    state.backward.primitive = dnnl::pooling_backward(backward_pd);
    state.backward.impl = backward_pd.impl_info_str();
    state.backward.args = {{DNNL_ARG_DIFF_SRC, dnnl_unbound_memory(x_md)},
                           {DNNL_ARG_DIFF_DST, dnnl_unbound_memory(y_md)}};
    dnnl_add_scratchpad(state.backward, backward_pd);
    if (pass == PoolPass::MaxBackward) {
      // The recomputed forward output and the workspace are node scratch, owned by oneDNN memory.
      const dnnl::memory workspace(forward_pd.workspace_desc(), engine);
      state.forward.args[DNNL_ARG_DST] = dnnl::memory(y_md, engine);
      state.forward.args[DNNL_ARG_WORKSPACE] = workspace;
      state.backward.args[DNNL_ARG_WORKSPACE] = workspace;
    }
    return true;
  } catch (const dnnl::error& error) {
    if (is_unimplemented(error, "a pooling descriptor")) return false;
    throw;
  }
}

// The node's state for `x_shape`, rebuilt when the shape changes.
PoolState& pool_state(KernelContext& ctx, PoolPass pass, PoolKind kind, const PoolGeometry& g,
                      std::int64_t channel_block = 0) {
  auto* state = dynamic_cast<PoolState*>(ctx.state.get());
  const Dims x_shape = g.input_shape();
  if (state != nullptr && state->x_shape == x_shape) return *state;
  auto fresh = std::make_shared<PoolState>();
  fresh->x_shape = x_shape;
  fresh->unimplemented = !build_calls(pass, kind, g, channel_block, *fresh);
  state = fresh.get();
  ctx.state = std::move(fresh);
  return *state;
}
}  // namespace

bool run_pool_forward_dnnl(KernelContext& ctx, PoolKind kind, const PoolGeometry& geometry,
                           const Tensor& x, const Tensor& y, std::int64_t channel_block) {
  PoolState& state = pool_state(ctx, PoolPass::Forward, kind, geometry, channel_block);
  if (state.unimplemented) return false;
  dnnl_bind(state.forward, DNNL_ARG_SRC, x.raw_data());
  dnnl_bind(state.forward, DNNL_ARG_DST, y.raw_data());
  dnnl_execute(state.forward);
  return true;
}

bool run_avg_pool_backward_dnnl(KernelContext& ctx, PoolKind kind, const PoolGeometry& geometry,
                                const Tensor& dy, const Tensor& dx) {
  PoolState& state = pool_state(ctx, PoolPass::AverageBackward, kind, geometry);
  if (state.unimplemented) return false;
  dnnl_bind(state.backward, DNNL_ARG_DIFF_DST, dy.raw_data());
  dnnl_bind(state.backward, DNNL_ARG_DIFF_SRC, dx.raw_data());
  dnnl_execute(state.backward);
  return true;
}

bool run_max_pool_backward_dnnl(KernelContext& ctx,
                                const PoolGeometry& geometry,
                                const Tensor& x,
                                const Tensor& dy,
                                const Tensor& dx,
                                std::int64_t channel_block) {
  PoolState& state = pool_state(ctx, PoolPass::MaxBackward, PoolKind::Max, geometry, channel_block);
  if (state.unimplemented) return false;
  dnnl_bind(state.forward, DNNL_ARG_SRC, x.raw_data());
  dnnl_execute(state.forward);
  dnnl_bind(state.backward, DNNL_ARG_DIFF_DST, dy.raw_data());
  dnnl_bind(state.backward, DNNL_ARG_DIFF_SRC, dx.raw_data());
  dnnl_execute(state.backward);
  return true;
}

}  // namespace tscope::ops::detail
