// SPDX-License-Identifier: Apache-2.0
// AdvancedSubtensor: general integer-array indexing (NumPy "advanced" indexing on consecutive
// axes, see advanced_plan.h). A gather into a new tensor.
#include "advanced_plan.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/shape.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
constexpr int kFirstIndexInput = 1;

std::vector<Type> infer_advanced_subtensor(const InferContext& ctx) {
  const Type& x = ctx.input_type(0);
  return {Type{x.dtype, detail::infer_advanced_dims("AdvancedSubtensor", x,
                                                    detail::decode_entries(ctx.attrs),
                                                    ctx.inputs.subspan(kFirstIndexInput))}};
}

void compute_advanced_subtensor(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const detail::AdvancedPlan plan = detail::plan_advanced(
      ctx, x.shape(), x.strides(), detail::decode_entries(*ctx.attrs), kFirstIndexInput);
  Tensor& out = ctx.allocate_output(0, x.dtype(), plan.output_shape);
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* source = static_cast<const T*>(x.raw_data());
    T* target = static_cast<T*>(out.raw_data());
    for (std::size_t i = 0; i < plan.offsets.size(); ++i) target[i] = source[plan.offsets[i]];
  });
}

std::vector<Variable> pullback_advanced_subtensor(const PullbackContext& ctx) {
  std::vector<Variable> grads(ctx.inputs.size());
  const Variable& x = ctx.inputs[0];
  const Variable& g = ctx.output_grads[0];
  if (!g.defined() || !is_floating(x.dtype())) return grads;
  const IndexList indices = detail::index_list_from(detail::decode_entries(ctx.attrs),
                                                    ctx.inputs.subspan(kFirstIndexInput));
  grads[0] = advanced_inc_subtensor(zeros_like(x), indices, g);
  return grads;
}

// Theano prints the op without its index pattern.
std::string print_advanced_subtensor(const OpDef&, const Attrs&) { return "AdvancedSubtensor"; }

Cost advanced_subtensor_cost(const CostContext& ctx) {
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  double index_bytes = 0;
  for (std::size_t i = kFirstIndexInput; i < ctx.input_shapes.size(); ++i) {
    index_bytes += static_cast<double>(dtype_size(ctx.input_dtypes[i])) *
                   static_cast<double>(ctx.input_shapes[i].product());
  }
  return Cost{
      .flops = 0,
      .bytes = 2 * item * static_cast<double>(ctx.output_shapes[0].product()) + index_bytes};
}
}  // namespace

void register_advanced_subtensor(OpRegistry& registry) {
  registry.add({.name = "AdvancedSubtensor",
                .family = "AdvancedSubtensor",
                .summary = "x[a, b] for integer arrays a, b on consecutive axes (a gather)",
                .num_inputs = -1,
                .infer = infer_advanced_subtensor,
                .reference = {"gather", compute_advanced_subtensor},
                .pullback = pullback_advanced_subtensor,
                .cost = advanced_subtensor_cost,
                .print = print_advanced_subtensor});
}

}  // namespace tscope::ops

namespace tscope {

Variable advanced_subtensor(const Variable& x,
                            const IndexList& indices,
                            const std::source_location& location) {
  ProvenanceScope scope("advanced_subtensor", location);
  ops::detail::LoweredIndex lowered = ops::detail::lower_index(indices, /*allow_arrays=*/true);
  Attrs attrs;
  ops::detail::encode_entries(lowered.entries, attrs);
  std::vector<Variable> inputs{x};
  inputs.insert(inputs.end(), lowered.symbolic_inputs.begin(), lowered.symbolic_inputs.end());
  return apply_op1(op_def("AdvancedSubtensor"), std::move(inputs), std::move(attrs), location);
}

}  // namespace tscope
