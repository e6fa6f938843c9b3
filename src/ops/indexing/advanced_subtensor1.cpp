// SPDX-License-Identifier: Apache-2.0
// AdvancedSubtensor1: x[indices] for an integer vector `indices` along axis 0 (a gather of rows).
#include <cstring>

#include "index_spec.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/shape.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
std::vector<Type> infer_advanced_subtensor1(const InferContext& ctx) {
  const Type& x = ctx.input_type(0);
  const Type& indices = ctx.input_type(1);
  detail::check_row_indices("AdvancedSubtensor1", x, indices);
  Dims dims{indices.dims[0]};
  for (int axis = 1; axis < x.rank(); ++axis) dims.push_back(x.dims[axis]);
  return {Type{x.dtype, dims}};
}

Dims gathered_shape(const Tensor& x, std::int64_t count) {
  Dims shape{count};
  for (int axis = 1; axis < x.rank(); ++axis) shape.push_back(x.shape()[axis]);
  return shape;
}

// The oracle: every output element's source offset computed from its flat index.
void compute_advanced_subtensor1_reference(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<std::int64_t> rows =
      detail::checked_indices(ctx, ctx.input(1), /*axis=*/0, x.shape()[0]);
  Tensor& out =
      ctx.allocate_output(0, x.dtype(), gathered_shape(x, static_cast<std::int64_t>(rows.size())));
  const std::int64_t row_elements =
      rows.empty() ? 0 : out.numel() / static_cast<std::int64_t>(rows.size());
  Dims row_shape = out.shape();
  row_shape[0] = 1;
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* source = static_cast<const T*>(x.raw_data());
    T* target = static_cast<T*>(out.raw_data());
    for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
      const std::int64_t row = rows[static_cast<std::size_t>(flat / row_elements)];
      const std::int64_t within =
          detail::strided_offset(row_shape, x.strides(), flat % row_elements);
      target[flat] = source[row * x.strides()[0] + within];
    }
  });
}

// Rows of a contiguous input are copied whole; others walk their strides.
void compute_advanced_subtensor1(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<std::int64_t> rows =
      detail::checked_indices(ctx, ctx.input(1), /*axis=*/0, x.shape()[0]);
  Tensor& out =
      ctx.allocate_output(0, x.dtype(), gathered_shape(x, static_cast<std::int64_t>(rows.size())));
  if (out.numel() == 0) return;
  const std::int64_t row_elements = out.numel() / static_cast<std::int64_t>(rows.size());
  const std::size_t item = dtype_size(x.dtype());
  char* target = static_cast<char*>(out.raw_data());
  const char* source = static_cast<const char*>(x.raw_data());
  Dims row_shape = out.shape();
  row_shape[0] = 1;
  const bool contiguous_rows = x.is_contiguous();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::int64_t row_offset = rows[i] * x.strides()[0];
    char* row_target =
        target + static_cast<std::int64_t>(i) * row_elements * static_cast<std::int64_t>(item);
    if (contiguous_rows) {
      std::memcpy(row_target, source + row_offset * static_cast<std::int64_t>(item),
                  static_cast<std::size_t>(row_elements) * item);
      continue;
    }
    detail::walk_strided(
        row_shape, x.strides(), x.strides(),
        [&](std::int64_t flat, std::int64_t offset, std::int64_t) {
          std::memcpy(row_target + flat * static_cast<std::int64_t>(item),
                      source + (row_offset + offset) * static_cast<std::int64_t>(item), item);
        });
  }
}

std::vector<Variable> pullback_advanced_subtensor1(const PullbackContext& ctx) {
  const Variable& x = ctx.inputs[0];
  const Variable& g = ctx.output_grads[0];
  if (!g.defined() || !is_floating(x.dtype())) return {Variable(), Variable()};
  return {advanced_inc_subtensor1(zeros_like(x), ctx.inputs[1], g), Variable()};
}

Cost advanced_subtensor1_cost(const CostContext& ctx) {
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  const double index_item = static_cast<double>(dtype_size(ctx.input_dtypes[1]));
  return Cost{.flops = 0,
              .bytes = 2 * item * static_cast<double>(ctx.output_shapes[0].product()) +
                       index_item * static_cast<double>(ctx.input_shapes[1].product())};
}
}  // namespace

void register_advanced_subtensor1(OpRegistry& registry) {
  registry.add({.name = "AdvancedSubtensor1",
                .family = "AdvancedSubtensor1",
                .summary = "x[indices] for an integer vector along axis 0",
                .num_inputs = 2,
                .infer = infer_advanced_subtensor1,
                .reference = {"ref", compute_advanced_subtensor1_reference},
                .fast = {"cpu", compute_advanced_subtensor1},
                .pullback = pullback_advanced_subtensor1,
                .cost = advanced_subtensor1_cost});
}

}  // namespace tscope::ops

namespace tscope {

Variable advanced_subtensor1(const Variable& x,
                             const Variable& indices,
                             const std::source_location& location) {
  return apply_op1(op_def("AdvancedSubtensor1"), {x, indices}, Attrs{}, location);
}

}  // namespace tscope
