// SPDX-License-Identifier: Apache-2.0
#include "batch_norm_dnnl.h"

#include <vector>

#include "channel_blocks.h"
#include "dnnl_util.h"

namespace tscope::ops::detail {
namespace {
using dnnl::normalization_flags;
using dnnl::prop_kind;

enum class NormPass { Train, Inference, Grad };

struct NormState final : KernelState {
  Dims x_shape;
  bool unimplemented = false;
  DnnlCall call;
};

const normalization_flags kScaleShift =
    normalization_flags::use_scale | normalization_flags::use_shift;

dnnl::batch_normalization_forward::primitive_desc forward_pd(prop_kind kind,
                                                             const dnnl::memory::desc& x_md,
                                                             double epsilon,
                                                             normalization_flags flags) {
  return {dnnl::batch_normalization_forward::desc(kind, x_md, static_cast<float>(epsilon),
                                                  kScaleShift | flags),
          dnnl_attr(), dnnl_engine()};
}

// `x_shape` is the plain (logical) shape; `block` says how x is stored.
bool build_call(
    NormPass pass, double epsilon, const Dims& x_shape, std::int64_t block, NormState& state) {
  const dnnl::memory::desc x_md =
      block == 0 ? dnnl_plain_desc(x_shape) : dnnl_image_desc(x_shape, block);
  const dnnl::memory::desc c_md = dnnl_plain_desc(Dims{x_shape[1]});
  try {
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, dnnl_unbound_memory(x_md)},
                                                  {DNNL_ARG_SCALE, dnnl_unbound_memory(c_md)},
                                                  {DNNL_ARG_SHIFT, dnnl_unbound_memory(c_md)},
                                                  {DNNL_ARG_MEAN, dnnl_unbound_memory(c_md)},
                                                  {DNNL_ARG_VARIANCE, dnnl_unbound_memory(c_md)}};
    dnnl::primitive_desc_base chosen;
    if (pass == NormPass::Grad) {
      const auto hint =
          forward_pd(prop_kind::forward_training, x_md, epsilon, normalization_flags::none);
      const dnnl::batch_normalization_backward::primitive_desc pd(
          dnnl::batch_normalization_backward::desc(prop_kind::backward, x_md, x_md,
                                                   static_cast<float>(epsilon), kScaleShift),
          dnnl_attr(), dnnl_engine(), hint);
      state.call.primitive = dnnl::batch_normalization_backward(pd);
      chosen = pd;
      state.call.impl = pd.impl_info_str();
      args[DNNL_ARG_DIFF_DST] = dnnl_unbound_memory(x_md);
      args[DNNL_ARG_DIFF_SRC] = dnnl_unbound_memory(x_md);
      args[DNNL_ARG_DIFF_SCALE] = dnnl_unbound_memory(c_md);
      args[DNNL_ARG_DIFF_SHIFT] = dnnl_unbound_memory(c_md);
    } else {
      const auto pd =
          pass == NormPass::Train
              ? forward_pd(prop_kind::forward_training, x_md, epsilon, normalization_flags::none)
              : forward_pd(prop_kind::forward_inference, x_md, epsilon,
                           normalization_flags::use_global_stats);
      state.call.primitive = dnnl::batch_normalization_forward(pd);
      chosen = pd;
      state.call.impl = pd.impl_info_str();
      args[DNNL_ARG_DST] = dnnl_unbound_memory(x_md);
    }
    state.call.args = std::move(args);
    dnnl_add_scratchpad(state.call, chosen);
    return true;
  } catch (const dnnl::error& error) {
    if (is_unimplemented(error, "a batch normalization descriptor")) return false;
    throw;
  }
}

// The node's call for x's shape, rebuilt when the shape changes; null when oneDNN has none.
DnnlCall* norm_call(KernelContext& ctx,
                    NormPass pass,
                    double epsilon,
                    const Dims& x_shape,
                    std::int64_t block = 0) {
  auto* state = dynamic_cast<NormState*>(ctx.state.get());
  if (state == nullptr || !(state->x_shape == x_shape)) {
    auto fresh = std::make_shared<NormState>();
    fresh->x_shape = x_shape;
    const Dims logical = block == 0 ? x_shape : plain_shape(x_shape);
    fresh->unimplemented = !build_call(pass, epsilon, logical, block, *fresh);
    state = fresh.get();
    ctx.state = std::move(fresh);
  }
  return state->unimplemented ? nullptr : &state->call;
}

void bind_all(DnnlCall& call, std::initializer_list<std::pair<int, const Tensor*>> bindings) {
  for (const auto& [arg, tensor] : bindings) dnnl_bind(call, arg, tensor->raw_data());
}
}  // namespace

bool run_batch_norm_train_dnnl(KernelContext& ctx,
                               double epsilon,
                               const Tensor& x,
                               const Tensor& gamma,
                               const Tensor& beta,
                               const Tensor& y,
                               const Tensor& mean,
                               const Tensor& var,
                               std::int64_t block) {
  DnnlCall* call = norm_call(ctx, NormPass::Train, epsilon, x.shape(), block);
  if (call == nullptr) return false;
  bind_all(*call, {{DNNL_ARG_SRC, &x},
                   {DNNL_ARG_SCALE, &gamma},
                   {DNNL_ARG_SHIFT, &beta},
                   {DNNL_ARG_DST, &y},
                   {DNNL_ARG_MEAN, &mean},
                   {DNNL_ARG_VARIANCE, &var}});
  dnnl_execute(*call);
  return true;
}

bool run_batch_norm_inference_dnnl(KernelContext& ctx,
                                   double epsilon,
                                   const Tensor& x,
                                   const Tensor& gamma,
                                   const Tensor& beta,
                                   const Tensor& mean,
                                   const Tensor& var,
                                   const Tensor& y) {
  DnnlCall* call = norm_call(ctx, NormPass::Inference, epsilon, x.shape());
  if (call == nullptr) return false;
  bind_all(*call, {{DNNL_ARG_SRC, &x},
                   {DNNL_ARG_SCALE, &gamma},
                   {DNNL_ARG_SHIFT, &beta},
                   {DNNL_ARG_MEAN, &mean},
                   {DNNL_ARG_VARIANCE, &var},
                   {DNNL_ARG_DST, &y}});
  dnnl_execute(*call);
  return true;
}

// oneDNN 2.6 checks that the shift argument is bound in the backward pass although it only
// reads the scale; beta's values do not enter the gradient, so gamma is bound in its place.
bool run_batch_norm_grad_dnnl(KernelContext& ctx,
                              double epsilon,
                              const Tensor& x,
                              const Tensor& dy,
                              const Tensor& gamma,
                              const Tensor& mean,
                              const Tensor& var,
                              const Tensor& dx,
                              const Tensor& dgamma,
                              const Tensor& dbeta,
                              std::int64_t block) {
  DnnlCall* call = norm_call(ctx, NormPass::Grad, epsilon, x.shape(), block);
  if (call == nullptr) return false;
  bind_all(*call, {{DNNL_ARG_SRC, &x},
                   {DNNL_ARG_DIFF_DST, &dy},
                   {DNNL_ARG_SCALE, &gamma},
                   {DNNL_ARG_SHIFT, &gamma},
                   {DNNL_ARG_MEAN, &mean},
                   {DNNL_ARG_VARIANCE, &var},
                   {DNNL_ARG_DIFF_SRC, &dx},
                   {DNNL_ARG_DIFF_SCALE, &dgamma},
                   {DNNL_ARG_DIFF_SHIFT, &dbeta}});
  dnnl_execute(*call);
  return true;
}

}  // namespace tscope::ops::detail
