// SPDX-License-Identifier: Apache-2.0
// AdvancedIncSubtensor: a copy of x with y added at x[a, b] for integer arrays (the gradient of
// AdvancedSubtensor). Elements named several times receive every addition.
#include <cstring>

#include "../broadcast_grad.h"
#include "advanced_plan.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
constexpr int kValueInput = 1;
constexpr int kFirstIndexInput = 2;

std::vector<Type> infer_advanced_inc_subtensor(const InferContext& ctx) {
  const Type& x = ctx.input_type(0);
  const Type& y = ctx.input_type(kValueInput);
  if (y.dtype != x.dtype) {
    throw_error(ErrorKind::TypeMismatch,
                "AdvancedIncSubtensor: value dtype {} differs from the input dtype {}",
                dtype_name(y.dtype), dtype_name(x.dtype));
  }
  const Dims region =
      detail::infer_advanced_dims("AdvancedIncSubtensor", x, detail::decode_entries(ctx.attrs),
                                  ctx.inputs.subspan(kFirstIndexInput));
  detail::check_value_fits_region("AdvancedIncSubtensor", y, region, "region");
  return {x};
}

void compute_advanced_inc_subtensor(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(kValueInput);
  Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());
  const Tensor source = x.contiguous();
  std::memcpy(out.raw_data(), source.raw_data(), static_cast<std::size_t>(x.nbytes()));
  const detail::AdvancedPlan plan = detail::plan_advanced(
      ctx, out.shape(), out.strides(), detail::decode_entries(*ctx.attrs), kFirstIndexInput);
  const Dims value_strides = detail::broadcast_strides(
      ctx, y, detail::node_input_type(ctx, kValueInput), plan.output_shape, "value");
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* value = static_cast<const T*>(y.raw_data());
    T* target = static_cast<T*>(out.raw_data());
    for (std::size_t i = 0; i < plan.offsets.size(); ++i) {
      T& element = target[plan.offsets[i]];
      element =
          static_cast<T>(element + value[detail::strided_offset(plan.output_shape, value_strides,
                                                                static_cast<std::int64_t>(i))]);
    }
  });
}

std::vector<Variable> pullback_advanced_inc_subtensor(const PullbackContext& ctx) {
  std::vector<Variable> grads(ctx.inputs.size());
  const Variable& x = ctx.inputs[0];
  const Variable& g = ctx.output_grads[0];
  if (!g.defined() || !is_floating(x.dtype())) return grads;
  const IndexList indices = detail::index_list_from(detail::decode_entries(ctx.attrs),
                                                    ctx.inputs.subspan(kFirstIndexInput));
  grads[0] = g;
  grads[kValueInput] =
      detail::sum_to_type(advanced_subtensor(g, indices), ctx.inputs[kValueInput].type());
  return grads;
}

std::string print_advanced_inc_subtensor(const OpDef&, const Attrs&) {
  return "AdvancedIncSubtensor{no_inplace,inc}";
}

Cost advanced_inc_subtensor_cost(const CostContext& ctx) {
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  const double x_elements = static_cast<double>(ctx.input_shapes[0].product());
  const double y_elements = static_cast<double>(ctx.input_shapes[kValueInput].product());
  return Cost{.flops = y_elements, .bytes = item * (2 * x_elements + 2 * y_elements)};
}
}  // namespace

void register_advanced_inc_subtensor(OpRegistry& registry) {
  registry.add({.name = "AdvancedIncSubtensor",
                .family = "AdvancedIncSubtensor",
                .summary = "copy of x with y added at x[a, b] for integer arrays (a scatter-add)",
                .num_inputs = -1,
                .infer = infer_advanced_inc_subtensor,
                .reference = {"scatter_add", compute_advanced_inc_subtensor},
                .pullback = pullback_advanced_inc_subtensor,
                .cost = advanced_inc_subtensor_cost,
                .print = print_advanced_inc_subtensor});
}

}  // namespace tscope::ops

namespace tscope {

Variable advanced_inc_subtensor(const Variable& x,
                                const IndexList& indices,
                                const Variable& y,
                                const std::source_location& location) {
  ProvenanceScope scope("advanced_inc_subtensor", location);
  Variable value = y;
  if (y.dtype() != x.dtype() && promote_types(x.dtype(), y.dtype()) == x.dtype()) {
    value = cast(y, x.dtype(), location);
  }
  ops::detail::LoweredIndex lowered = ops::detail::lower_index(indices, /*allow_arrays=*/true);
  Attrs attrs;
  ops::detail::encode_entries(lowered.entries, attrs);
  std::vector<Variable> inputs{x, value};
  inputs.insert(inputs.end(), lowered.symbolic_inputs.begin(), lowered.symbolic_inputs.end());
  return apply_op1(op_def("AdvancedIncSubtensor"), std::move(inputs), std::move(attrs), location);
}

}  // namespace tscope
