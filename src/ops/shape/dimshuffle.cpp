// SPDX-License-Identifier: Apache-2.0
// DimShuffle: permute axes, insert size-1 axes, drop size-1 axes. A view: no copy.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope::ops {
namespace {
std::vector<Type> infer_dimshuffle(const InferContext& ctx) {
  const Type& input = ctx.input_type(0);
  const auto& pattern = ctx.attrs.get_ints("pattern");
  std::vector<bool> used(static_cast<std::size_t>(input.rank()), false);
  Dims dims;
  for (std::int64_t entry : pattern) {
    if (entry == kNewAxis) {
      dims.push_back(1);
      continue;
    }
    if (entry < 0 || entry >= input.rank()) {
      throw_error(ErrorKind::IndexOutOfRange, "DimShuffle pattern entry {} is out of range for rank {}",
                  entry, input.rank());
    }
    if (used[static_cast<std::size_t>(entry)]) {
      throw_error(ErrorKind::InvalidArgument, "DimShuffle pattern uses axis {} twice", entry);
    }
    used[static_cast<std::size_t>(entry)] = true;
    dims.push_back(input.dims[static_cast<int>(entry)]);
  }
  for (int axis = 0; axis < input.rank(); ++axis) {
    if (!used[static_cast<std::size_t>(axis)] && input.dims[axis] != 1) {
      throw_error(ErrorKind::ShapeMismatch,
                  "DimShuffle drops axis {} of {}, which is not statically of size 1", axis,
                  input.to_string());
    }
  }
  return {Type{input.dtype, dims}};
}

void compute_dimshuffle(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto& pattern = ctx.attrs->get_ints("pattern");
  Dims shape;
  Dims strides;
  for (std::int64_t entry : pattern) {
    if (entry == kNewAxis) {
      shape.push_back(1);
      strides.push_back(0);
    } else {
      shape.push_back(x.shape()[static_cast<int>(entry)]);
      strides.push_back(x.strides()[static_cast<int>(entry)]);
    }
  }
  ctx.output(0) = x.view(shape, strides, x.offset());
}

std::vector<Variable> pullback_dimshuffle(const PullbackContext& ctx) {
  // Inverse pattern: each input axis comes from the output axis that holds it; dropped axes
  // come back as new size-1 axes.
  const auto& pattern = ctx.attrs.get_ints("pattern");
  const int rank = ctx.inputs[0].rank();
  std::vector<std::int64_t> kept_pattern;  // drop the inserted axes from g first
  std::vector<std::int64_t> source_of_input_axis(static_cast<std::size_t>(rank), kNewAxis);
  std::int64_t kept = 0;
  for (std::size_t out_axis = 0; out_axis < pattern.size(); ++out_axis) {
    if (pattern[out_axis] == kNewAxis) continue;
    kept_pattern.push_back(static_cast<std::int64_t>(out_axis));
    source_of_input_axis[static_cast<std::size_t>(pattern[out_axis])] = kept++;
  }
  Variable g = ctx.output_grads[0];
  if (kept_pattern.size() != pattern.size()) g = dimshuffle(g, kept_pattern);
  return {dimshuffle(g, source_of_input_axis)};
}

std::string print_dimshuffle(const OpDef&, const Attrs& attrs) {
  std::vector<std::string> parts;
  for (std::int64_t entry : attrs.get_ints("pattern")) {
    parts.push_back(entry == kNewAxis ? "x" : std::to_string(entry));
  }
  return fmt::format("DimShuffle{{{}}}", fmt::join(parts, ","));
}

Cost dimshuffle_cost(const CostContext&) { return Cost{}; }
}  // namespace

void register_dimshuffle(OpRegistry& registry) {
  registry.add({.name = "DimShuffle",
                .family = "DimShuffle",
                .summary = "permute, insert or drop size-1 axes (a view)",
                .num_inputs = 1,
                .aliasing = {.views = {{0, 0}}},
                .infer = infer_dimshuffle,
                .reference = {"view", compute_dimshuffle},
                .pullback = pullback_dimshuffle,
                .cost = dimshuffle_cost,
                .print = print_dimshuffle});
}

}  // namespace tscope::ops

namespace tscope {

Variable dimshuffle(const Variable& x, const std::vector<std::int64_t>& pattern,
                    const std::source_location& location) {
  return apply_op1(op_def("DimShuffle"), {x}, Attrs{{"pattern", pattern}}, location);
}

Variable transpose(const Variable& x, const std::source_location& location) {
  std::vector<std::int64_t> pattern;
  for (int axis = x.rank() - 1; axis >= 0; --axis) pattern.push_back(axis);
  return dimshuffle(x, pattern, location);
}

}  // namespace tscope
