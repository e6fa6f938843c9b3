// SPDX-License-Identifier: Apache-2.0
// AdvancedIncSubtensor1: a copy of x with y added to (or written over) the rows x[indices] along
// axis 0. Rows are updated in index order, so duplicate indices accumulate (inc) or the last one
// wins (set), as in NumPy's np.add.at / x[idx] = y.
#include <fmt/format.h>

#include <cstring>

#include "../broadcast_grad.h"
#include "index_spec.h"
#include "tscope/graph/constructors.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
constexpr int kValueInput = 1;
constexpr int kIndexInput = 2;

bool is_set(const Attrs& attrs) { return attrs.get_bool("set_instead_of_inc"); }

std::vector<Type> infer_advanced_inc_subtensor1(const InferContext& ctx) {
  const Type& x = ctx.input_type(0);
  const Type& y = ctx.input_type(kValueInput);
  const Type& indices = ctx.input_type(kIndexInput);
  detail::check_row_indices("AdvancedIncSubtensor1", x, indices);
  if (y.dtype != x.dtype) {
    throw_error(ErrorKind::TypeMismatch,
                "AdvancedIncSubtensor1: value dtype {} differs from the input dtype {}",
                dtype_name(y.dtype), dtype_name(x.dtype));
  }
  Dims region{indices.dims[0]};
  for (int axis = 1; axis < x.rank(); ++axis) region.push_back(x.dims[axis]);
  detail::check_value_fits_region("AdvancedIncSubtensor1", y, region, "rows");
  return {x};
}

struct Operands {
  std::vector<std::int64_t> rows;
  Dims region_shape;   // (rows, x.shape[1:])
  Dims value_strides;  // y's strides broadcast over the region
};

Operands prepare(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Operands operands;
  operands.rows = detail::checked_indices(ctx, ctx.input(kIndexInput), /*axis=*/0, x.shape()[0]);
  Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());
  const Tensor source = x.contiguous();
  std::memcpy(out.raw_data(), source.raw_data(), static_cast<std::size_t>(x.nbytes()));
  operands.region_shape = x.shape();
  operands.region_shape[0] = static_cast<std::int64_t>(operands.rows.size());
  operands.value_strides = detail::broadcast_strides(ctx, ctx.input(kValueInput),
                                                     detail::node_input_type(ctx, kValueInput),
                                                     operands.region_shape, "value");
  return operands;
}

template <class T>
void update(T& target, T value, bool set) {
  target = set ? value : static_cast<T>(target + value);
}

// The oracle: one element at a time, offsets from the flat index.
void compute_advanced_inc_subtensor1_reference(KernelContext& ctx) {
  const Operands operands = prepare(ctx);
  Tensor& out = ctx.output(0);
  const Tensor& y = ctx.input(kValueInput);
  const bool set = is_set(*ctx.attrs);
  const std::int64_t count = operands.region_shape.product();
  if (count == 0) return;
  const std::int64_t row_elements = count / static_cast<std::int64_t>(operands.rows.size());
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* target = static_cast<T*>(out.raw_data());
    const T* value = static_cast<const T*>(y.raw_data());
    for (std::int64_t flat = 0; flat < count; ++flat) {
      const std::int64_t row = operands.rows[static_cast<std::size_t>(flat / row_elements)];
      update(target[row * row_elements + flat % row_elements],
             value[detail::strided_offset(operands.region_shape, operands.value_strides, flat)],
             set);
    }
  });
}

void compute_advanced_inc_subtensor1(KernelContext& ctx) {
  const Operands operands = prepare(ctx);
  Tensor& out = ctx.output(0);
  const Tensor& y = ctx.input(kValueInput);
  const bool set = is_set(*ctx.attrs);
  if (operands.region_shape.product() == 0) return;
  Dims row_shape = operands.region_shape;
  row_shape[0] = 1;
  const Dims out_strides = out.strides();
  const std::int64_t value_row_stride = operands.value_strides[0];
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* target = static_cast<T*>(out.raw_data());
    const T* value = static_cast<const T*>(y.raw_data());
    for (std::size_t i = 0; i < operands.rows.size(); ++i) {
      T* target_row = target + operands.rows[i] * out_strides[0];
      const T* value_row = value + static_cast<std::int64_t>(i) * value_row_stride;
      detail::walk_strided(
          row_shape, out_strides, operands.value_strides,
          [&](std::int64_t, std::int64_t target_offset, std::int64_t value_offset) {
            update(target_row[target_offset], value_row[value_offset], set);
          });
    }
  });
}

std::vector<Variable> pullback_advanced_inc_subtensor1(const PullbackContext& ctx) {
  const Variable& x = ctx.inputs[0];
  const Variable& y = ctx.inputs[kValueInput];
  const Variable& indices = ctx.inputs[kIndexInput];
  const Variable& g = ctx.output_grads[0];
  if (!g.defined() || !is_floating(x.dtype())) return {Variable(), Variable(), Variable()};
  // Rows overwritten by a set receive no gradient through x.
  Variable gx = is_set(ctx.attrs)
                    ? advanced_set_subtensor1(g, indices, constant(Tensor::scalar(0.0, g.dtype())))
                    : g;
  Variable gy = detail::sum_to_type(advanced_subtensor1(g, indices), y.type());
  return {gx, gy, Variable()};
}

std::string print_advanced_inc_subtensor1(const OpDef&, const Attrs& attrs) {
  return fmt::format("AdvancedIncSubtensor1{{no_inplace,{}}}", is_set(attrs) ? "set" : "inc");
}

Cost advanced_inc_subtensor1_cost(const CostContext& ctx) {
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  const double x_elements = static_cast<double>(ctx.input_shapes[0].product());
  const double y_elements = static_cast<double>(ctx.input_shapes[kValueInput].product());
  return Cost{.flops = is_set(ctx.attrs) ? 0.0 : y_elements,
              .bytes = item * (2 * x_elements + 2 * y_elements)};
}

Variable apply_advanced_inc_subtensor1(const Variable& x,
                                       const Variable& indices,
                                       Variable y,
                                       bool set,
                                       const std::source_location& location) {
  ProvenanceScope scope(set ? "advanced_set_subtensor1" : "advanced_inc_subtensor1", location);
  if (y.dtype() != x.dtype() && promote_types(x.dtype(), y.dtype()) == x.dtype()) {
    y = cast(y, x.dtype(), location);
  }
  return apply_op1(op_def("AdvancedIncSubtensor1"), {x, std::move(y), indices},
                   Attrs{{"set_instead_of_inc", set}}, location);
}
}  // namespace

void register_advanced_inc_subtensor1(OpRegistry& registry) {
  registry.add({.name = "AdvancedIncSubtensor1",
                .family = "AdvancedIncSubtensor1",
                .summary = "copy of x with y added to or written over rows x[indices]",
                .num_inputs = 3,
                .infer = infer_advanced_inc_subtensor1,
                .reference = {"ref", compute_advanced_inc_subtensor1_reference},
                .fast = {"cpu", compute_advanced_inc_subtensor1},
                .pullback = pullback_advanced_inc_subtensor1,
                .cost = advanced_inc_subtensor1_cost,
                .print = print_advanced_inc_subtensor1});
}

}  // namespace tscope::ops

namespace tscope {

Variable advanced_inc_subtensor1(const Variable& x,
                                 const Variable& indices,
                                 const Variable& y,
                                 const std::source_location& location) {
  return ops::apply_advanced_inc_subtensor1(x, indices, y, /*set=*/false, location);
}

Variable advanced_set_subtensor1(const Variable& x,
                                 const Variable& indices,
                                 const Variable& y,
                                 const std::source_location& location) {
  return ops::apply_advanced_inc_subtensor1(x, indices, y, /*set=*/true, location);
}

}  // namespace tscope
