// SPDX-License-Identifier: Apache-2.0
// Subtensor: NumPy basic indexing (slices and integers) as a view of the input.
#include <fmt/format.h>

#include "index_spec.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/shape.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
constexpr int kFirstIndexInput = 1;

std::vector<Type> infer_subtensor(const InferContext& ctx) {
  const Type& x = ctx.input_type(0);
  const auto entries = detail::decode_entries(ctx.attrs);
  detail::check_symbolic_inputs("Subtensor", x, entries, ctx.inputs.subspan(kFirstIndexInput));
  return {Type{x.dtype, detail::infer_basic_dims("Subtensor", x.dims, entries)}};
}

std::vector<detail::ResolvedAxis> resolve(const KernelContext& ctx) {
  return detail::resolve_basic(ctx, ctx.input(0).shape(), detail::decode_entries(*ctx.attrs),
                               kFirstIndexInput);
}

// The oracle: a copy made element by element from the resolved starts and steps.
void compute_subtensor_reference(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<detail::ResolvedAxis> axes = resolve(ctx);
  Dims shape;
  for (const detail::ResolvedAxis& axis : axes) {
    if (axis.kept) shape.push_back(axis.length);
  }
  Tensor& out = ctx.allocate_output(0, x.dtype(), shape);
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* source = static_cast<const T*>(x.raw_data());
    T* target = static_cast<T*>(out.raw_data());
    for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
      std::int64_t remaining = flat;
      std::int64_t offset = 0;
      for (int axis = x.rank() - 1; axis >= 0; --axis) {
        const detail::ResolvedAxis& resolved = axes[static_cast<std::size_t>(axis)];
        std::int64_t position = 0;
        if (resolved.kept) {
          position = remaining % resolved.length;
          remaining /= resolved.length;
        }
        offset += (resolved.start + position * resolved.step) * x.strides()[axis];
      }
      target[flat] = source[offset];
    }
  });
}

void compute_subtensor_view(KernelContext& ctx) {
  ctx.output(0) = detail::basic_view(ctx.input(0), resolve(ctx));
}

std::vector<Variable> pullback_subtensor(const PullbackContext& ctx) {
  std::vector<Variable> grads(ctx.inputs.size());
  const Variable& x = ctx.inputs[0];
  const Variable& g = ctx.output_grads[0];
  if (!g.defined() || !is_floating(x.dtype())) return grads;
  const IndexList indices = detail::index_list_from(detail::decode_entries(ctx.attrs),
                                                    ctx.inputs.subspan(kFirstIndexInput));
  grads[0] = inc_subtensor(zeros_like(x), indices, g);
  return grads;
}

std::string print_subtensor(const OpDef&, const Attrs& attrs) {
  return fmt::format("Subtensor{{{}}}", detail::print_entries(detail::decode_entries(attrs)));
}

// A view moves no data.
Cost subtensor_cost(const CostContext&) { return Cost{}; }
}  // namespace

void register_subtensor(OpRegistry& registry) {
  registry.add({.name = "Subtensor",
                .family = "Subtensor",
                .summary = "basic indexing x[1:-1, ::2, 3] (a view)",
                .num_inputs = -1,
                .aliasing = {.views = {{0, 0}}},
                .infer = infer_subtensor,
                .reference = {"copy", compute_subtensor_reference},
                .fast = {"view", compute_subtensor_view},
                .pullback = pullback_subtensor,
                .cost = subtensor_cost,
                .print = print_subtensor});
}

}  // namespace tscope::ops

namespace tscope {

Slice slice(IndexBound start, IndexBound stop, IndexBound step) {
  return Slice{std::move(start), std::move(stop), std::move(step)};
}

Variable subtensor(const Variable& x,
                   const IndexList& indices,
                   const std::source_location& location) {
  ops::detail::LoweredIndex lowered = ops::detail::lower_index(indices, /*allow_arrays=*/false);
  Attrs attrs;
  ops::detail::encode_entries(lowered.entries, attrs);
  std::vector<Variable> inputs{x};
  inputs.insert(inputs.end(), lowered.symbolic_inputs.begin(), lowered.symbolic_inputs.end());
  return apply_op1(op_def("Subtensor"), std::move(inputs), std::move(attrs), location);
}

}  // namespace tscope
