// SPDX-License-Identifier: Apache-2.0
// Any and All: CAReduce{or} / CAReduce{and} over axes of any dtype (an element counts as true
// when it is non-zero; NaN is true, as in NumPy). The output is bool; the gradient is zero.
// Identities: any over an empty extent is false, all over an empty extent is true.
#include "reduce_common.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
DType bool_dtype(DType) { return DType::Bool; }

std::vector<Type> infer_logical(const InferContext& ctx) {
  return detail::infer_reduce(ctx, bool_dtype);
}

template <bool kAny>
void compute_logical_reference(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int> axes = detail::reduced_axes(*ctx.attrs, x.rank());
  const bool keepdims = ctx.attrs->get_bool_or("keepdims", false);
  Tensor& out =
      ctx.allocate_output(0, DType::Bool, detail::reduced_dims(x.shape(), axes, keepdims));
  std::vector<bool> result(static_cast<std::size_t>(out.numel()), !kAny);
  detail::for_each_reduced(x.shape(), axes, [&](std::int64_t in_flat, std::int64_t out_flat) {
    const bool truth = x.at(in_flat) != 0.0;
    const auto group = static_cast<std::size_t>(out_flat);
    result[group] = kAny ? (result[group] || truth) : (result[group] && truth);
  });
  bool* data = static_cast<bool*>(out.raw_data());
  for (std::size_t i = 0; i < result.size(); ++i) data[i] = result[i];
}

template <bool kAny>
void compute_logical(KernelContext& ctx) {
  visit_dtype(ctx.input(0).dtype(), [&](auto tag) {
    using T = decltype(tag);
    const std::uint8_t init = kAny ? 0 : 1;
    detail::fold_reduce<T, std::uint8_t>(
        ctx, DType::Bool, init,
        [](std::uint8_t acc, T value) -> std::uint8_t {
          const bool truth = value != T{0};
          return kAny ? static_cast<std::uint8_t>(acc | truth) : static_cast<std::uint8_t>(acc & truth);
        },
        [](std::uint8_t acc) { return acc != 0; });
  });
}

std::string print_any(const OpDef&, const Attrs& attrs) { return detail::print_reduce("or", attrs); }
std::string print_all(const OpDef&, const Attrs& attrs) { return detail::print_reduce("and", attrs); }
}  // namespace

void register_any(OpRegistry& registry) {
  registry.add({.name = "Any",
                .family = "CAReduce",
                .summary = "logical or over axes",
                .num_inputs = 1,
                .traits = {.zero_gradient = true},
                .infer = infer_logical,
                .reference = {"ref", compute_logical_reference<true>},
                .fast = {"cpu", compute_logical<true>},
                .cost = detail::reduce_cost,
                .print = print_any});
}

void register_all(OpRegistry& registry) {
  registry.add({.name = "All",
                .family = "CAReduce",
                .summary = "logical and over axes",
                .num_inputs = 1,
                .traits = {.zero_gradient = true},
                .infer = infer_logical,
                .reference = {"ref", compute_logical_reference<false>},
                .fast = {"cpu", compute_logical<false>},
                .cost = detail::reduce_cost,
                .print = print_all});
}

}  // namespace tscope::ops

namespace tscope {

Variable any(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims,
             const std::source_location& location) {
  return apply_op1(op_def("Any"), {x}, ops::detail::reduce_attrs(x, axes, keepdims), location);
}

Variable all(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims,
             const std::source_location& location) {
  return apply_op1(op_def("All"), {x}, ops::detail::reduce_attrs(x, axes, keepdims), location);
}

}  // namespace tscope
