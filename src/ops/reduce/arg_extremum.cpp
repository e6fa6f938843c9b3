// SPDX-License-Identifier: Apache-2.0
// Argmax and Argmin over axes: int64 positions, zero gradient. Over several axes the position is
// the row-major flat index inside the reduced block (the axes flattened in order, as Theano's
// max_and_argmax does after moving them last). Ties resolve to the first position; a NaN counts
// as the extreme (the first NaN wins), as in NumPy. An empty reduced extent raises InvalidArgument.
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reduce_common.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
DType index_dtype(DType) { return DType::Int64; }

std::vector<Type> infer_arg_extremum(const InferContext& ctx) {
  return detail::infer_reduce(ctx, index_dtype);
}

// True when `value` should replace `best` (strict, so the first of equal values stays).
template <bool kMax>
bool better(double value, double best) {
  if (std::isnan(best)) return false;
  if (std::isnan(value)) return true;
  return kMax ? value > best : value < best;
}

template <bool kMax>
void compute_arg_extremum(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int> axes = detail::reduced_axes(*ctx.attrs, x.rank());
  detail::require_nonempty_reduction(x.shape(), axes, kMax ? "argmax" : "argmin");
  const bool keepdims = ctx.attrs->get_bool_or("keepdims", false);
  Tensor& out =
      ctx.allocate_output(0, DType::Int64, detail::reduced_dims(x.shape(), axes, keepdims));
  const auto groups = static_cast<std::size_t>(out.numel());
  std::vector<double> best(groups, 0.0);
  std::vector<std::int64_t> best_position(groups, 0);
  // for_each_reduced walks row-major, so the k-th visit of a group is reduced-block position k.
  std::vector<std::int64_t> position(groups, 0);
  detail::for_each_reduced(x.shape(), axes, [&](std::int64_t in_flat, std::int64_t out_flat) {
    const auto group = static_cast<std::size_t>(out_flat);
    const double value = x.at(in_flat);
    if (position[group] == 0 || better<kMax>(value, best[group])) {
      best[group] = value;
      best_position[group] = position[group];
    }
    ++position[group];
  });
  auto* data = static_cast<std::int64_t*>(out.raw_data());
  for (std::size_t i = 0; i < groups; ++i) data[i] = best_position[i];
}

std::string print_arg(std::string_view name, const Attrs& attrs) {
  std::string text = fmt::format("{}{{{}}}", name, fmt::join(attrs.get_ints("axes"), ","));
  if (attrs.get_bool_or("keepdims", false)) text += "{keepdims}";
  return text;
}
std::string print_argmax(const OpDef&, const Attrs& attrs) { return print_arg("Argmax", attrs); }
std::string print_argmin(const OpDef&, const Attrs& attrs) { return print_arg("Argmin", attrs); }
}  // namespace

void register_argmax(OpRegistry& registry) {
  registry.add({.name = "Argmax",
                .family = "Argmax",
                .summary = "position of the maximum over axes (int64)",
                .num_inputs = 1,
                .traits = {.zero_gradient = true},
                .infer = infer_arg_extremum,
                .reference = {"ref", compute_arg_extremum<true>},
                .cost = detail::reduce_cost,
                .print = print_argmax});
}

void register_argmin(OpRegistry& registry) {
  registry.add({.name = "Argmin",
                .family = "Argmin",
                .summary = "position of the minimum over axes (int64)",
                .num_inputs = 1,
                .traits = {.zero_gradient = true},
                .infer = infer_arg_extremum,
                .reference = {"ref", compute_arg_extremum<false>},
                .cost = detail::reduce_cost,
                .print = print_argmin});
}

}  // namespace tscope::ops

namespace tscope {

Variable argmax(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims,
                const std::source_location& location) {
  return apply_op1(op_def("Argmax"), {x}, ops::detail::reduce_attrs(x, axes, keepdims), location);
}

Variable argmin(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims,
                const std::source_location& location) {
  return apply_op1(op_def("Argmin"), {x}, ops::detail::reduce_attrs(x, axes, keepdims), location);
}

}  // namespace tscope
