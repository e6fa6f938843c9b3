// SPDX-License-Identifier: Apache-2.0
// IncSubtensor: a copy of x with y added to (or written over) the region a basic index selects.
// One op for both, as in Theano; the "set_instead_of_inc" attribute picks the mode.
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
constexpr int kFirstIndexInput = 2;

bool is_set(const Attrs& attrs) { return attrs.get_bool("set_instead_of_inc"); }

std::vector<Type> infer_inc_subtensor(const InferContext& ctx) {
  const Type& x = ctx.input_type(0);
  const Type& y = ctx.input_type(1);
  if (y.dtype != x.dtype) {
    throw_error(ErrorKind::TypeMismatch,
                "IncSubtensor: value dtype {} differs from the input dtype {}; expected a value "
                "that casts to it without loss",
                dtype_name(y.dtype), dtype_name(x.dtype));
  }
  const auto entries = detail::decode_entries(ctx.attrs);
  detail::check_symbolic_inputs("IncSubtensor", x, entries, ctx.inputs.subspan(kFirstIndexInput));
  detail::check_value_fits_region("IncSubtensor", y,
                                  detail::infer_basic_dims("IncSubtensor", x.dims, entries),
                                  "region");
  return {x};
}

struct Operands {
  Tensor region;       // view of the output
  Dims value_strides;  // y's strides broadcast over the region
};

// Copies x into a fresh output and returns the region of the output to update.
Operands prepare(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<detail::ResolvedAxis> axes =
      detail::resolve_basic(ctx, x.shape(), detail::decode_entries(*ctx.attrs), kFirstIndexInput);
  Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());
  if (x.is_contiguous()) {
    std::memcpy(out.raw_data(), x.raw_data(), static_cast<std::size_t>(x.nbytes()));
  } else {
    visit_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* source = static_cast<const T*>(x.raw_data());
      T* target = static_cast<T*>(out.raw_data());
      detail::walk_strided(x.shape(), x.strides(), x.strides(),
                           [&](std::int64_t flat, std::int64_t offset, std::int64_t) {
                             target[flat] = source[offset];
                           });
    });
  }
  Operands operands;
  operands.region = detail::basic_view(out, axes);
  operands.value_strides = detail::broadcast_strides(
      ctx, ctx.input(1), detail::node_input_type(ctx, 1), operands.region.shape(), "value");
  return operands;
}

template <class T>
void update(T& target, T value, bool set) {
  target = set ? value : static_cast<T>(target + value);
}

// The oracle: every element's offsets computed from its flat index.
void compute_inc_subtensor_reference(KernelContext& ctx) {
  const Operands operands = prepare(ctx);
  const Tensor& y = ctx.input(1);
  const bool set = is_set(*ctx.attrs);
  const Tensor& region = operands.region;
  visit_dtype(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* target = static_cast<T*>(region.raw_data());
    const T* value = static_cast<const T*>(y.raw_data());
    for (std::int64_t flat = 0; flat < region.numel(); ++flat) {
      update(target[detail::strided_offset(region.shape(), region.strides(), flat)],
             value[detail::strided_offset(region.shape(), operands.value_strides, flat)], set);
    }
  });
}

void compute_inc_subtensor(KernelContext& ctx) {
  const Operands operands = prepare(ctx);
  const Tensor& y = ctx.input(1);
  const bool set = is_set(*ctx.attrs);
  visit_dtype(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* target = static_cast<T*>(operands.region.raw_data());
    const T* value = static_cast<const T*>(y.raw_data());
    detail::walk_strided(operands.region.shape(), operands.region.strides(), operands.value_strides,
                         [&](std::int64_t, std::int64_t target_offset, std::int64_t value_offset) {
                           update(target[target_offset], value[value_offset], set);
                         });
  });
}

std::vector<Variable> pullback_inc_subtensor(const PullbackContext& ctx) {
  std::vector<Variable> grads(ctx.inputs.size());
  const Variable& x = ctx.inputs[0];
  const Variable& y = ctx.inputs[1];
  const Variable& g = ctx.output_grads[0];
  if (!g.defined() || !is_floating(x.dtype())) return grads;
  const IndexList indices = detail::index_list_from(detail::decode_entries(ctx.attrs),
                                                    ctx.inputs.subspan(kFirstIndexInput));
  // x's elements in the region were overwritten by a set, so they receive no gradient.
  grads[0] =
      is_set(ctx.attrs) ? set_subtensor(g, indices, constant(Tensor::scalar(0.0, g.dtype()))) : g;
  grads[1] = detail::sum_to_type(subtensor(g, indices), y.type());
  return grads;
}

std::string print_inc_subtensor(const OpDef&, const Attrs& attrs) {
  return fmt::format("IncSubtensor{{{};{}}}", is_set(attrs) ? "Set" : "Inc",
                     detail::print_entries(detail::decode_entries(attrs)));
}

// One pass copying x, one update per element of y (a lower bound when y broadcasts).
Cost inc_subtensor_cost(const CostContext& ctx) {
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  const double x_elements = static_cast<double>(ctx.input_shapes[0].product());
  const double y_elements = static_cast<double>(ctx.input_shapes[1].product());
  return Cost{.flops = is_set(ctx.attrs) ? 0.0 : y_elements,
              .bytes = item * (2 * x_elements + 2 * y_elements)};
}

Variable apply_inc_subtensor(const Variable& x,
                             const IndexList& indices,
                             Variable y,
                             bool set,
                             const std::source_location& location) {
  ProvenanceScope scope(set ? "set_subtensor" : "inc_subtensor", location);
  if (y.dtype() != x.dtype() && promote_types(x.dtype(), y.dtype()) == x.dtype()) {
    y = cast(y, x.dtype(), location);
  }
  detail::LoweredIndex lowered = detail::lower_index(indices, /*allow_arrays=*/false);
  Attrs attrs{{"set_instead_of_inc", set}};
  detail::encode_entries(lowered.entries, attrs);
  std::vector<Variable> inputs{x, std::move(y)};
  inputs.insert(inputs.end(), lowered.symbolic_inputs.begin(), lowered.symbolic_inputs.end());
  return apply_op1(op_def("IncSubtensor"), std::move(inputs), std::move(attrs), location);
}
}  // namespace

void register_inc_subtensor(OpRegistry& registry) {
  registry.add({.name = "IncSubtensor",
                .family = "IncSubtensor",
                .summary = "copy of x with y added to or written over x[indices]",
                .num_inputs = -1,
                .infer = infer_inc_subtensor,
                .reference = {"ref", compute_inc_subtensor_reference},
                .fast = {"cpu", compute_inc_subtensor},
                .pullback = pullback_inc_subtensor,
                .cost = inc_subtensor_cost,
                .print = print_inc_subtensor});
}

}  // namespace tscope::ops

namespace tscope {

Variable inc_subtensor(const Variable& x,
                       const IndexList& indices,
                       const Variable& y,
                       const std::source_location& location) {
  return ops::apply_inc_subtensor(x, indices, y, /*set=*/false, location);
}

Variable set_subtensor(const Variable& x,
                       const IndexList& indices,
                       const Variable& y,
                       const std::source_location& location) {
  return ops::apply_inc_subtensor(x, indices, y, /*set=*/true, location);
}

}  // namespace tscope
