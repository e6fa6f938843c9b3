// SPDX-License-Identifier: Apache-2.0
// Alloc(value, dims...): value broadcast to a shape given by integer scalars (Theano's Alloc), and
// the builders on top of it: zeros, ones, fill, zeros_like, ones_like. value's axes align with
// the trailing target axes and broadcast only where value's static dim is 1 (Theano's rule);
// anywhere else the extents must match, checked at build time when static, else at run time.
#include <algorithm>
#include <array>
#include <cstring>

#include "../broadcast_grad.h"
#include "shape_values.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/constructors.h"
#include "tscope/graph/op_registry.h"
#include "tscope/graph/provenance.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope::ops {
namespace {
std::vector<Type> infer_alloc(const InferContext& ctx) {
  const Type& value = ctx.input_type(0);
  const int rank = ctx.num_inputs() - 1;
  if (value.rank() > rank) {
    throw_error(ErrorKind::TypeMismatch, "Alloc: value {} has more axes than the {} target dims",
                value.to_string(), rank);
  }
  Dims dims;
  for (int axis = 0; axis < rank; ++axis) {
    const Variable& extent = ctx.inputs[static_cast<std::size_t>(axis + 1)];
    detail::require_integer(extent, 0, "an Alloc extent");
    const auto known = detail::static_scalar(extent);
    if (known && *known < 0) {
      throw_error(ErrorKind::InvalidArgument, "Alloc: extent {} of axis {} is negative", *known,
                  axis);
    }
    dims.push_back(known.value_or(kUnknownDim));
  }
  const int lead = rank - value.rank();
  for (int axis = 0; axis < value.rank(); ++axis) {
    const std::int64_t from = value.dims[axis];
    std::int64_t& to = dims[lead + axis];
    if (from == 1 || from == kUnknownDim) continue;
    if (to == kUnknownDim) {
      to = from;
    } else if (to != from) {
      throw_error(ErrorKind::ShapeMismatch, "Alloc: value {} does not broadcast to {}",
                  value.to_string(), dims.to_string());
    }
  }
  return {Type{value.dtype, dims}};
}

// The output's shape and, for every output axis, the stride into value (0 where value
// broadcasts or has no such axis), checked against value's shape.
struct AllocPlan {
  Dims shape;
  Dims source_strides;
};

AllocPlan plan_alloc(const KernelContext& ctx) {
  const Tensor& value = ctx.input(0);
  const Type& value_type = ctx.node->input(0).type();
  const int rank = ctx.num_inputs - 1;
  AllocPlan plan;
  for (int axis = 0; axis < rank; ++axis) {
    const auto extent = static_cast<std::int64_t>(ctx.input(axis + 1).at(0));
    if (extent < 0) {
      throw_error(ErrorKind::InvalidArgument, "Alloc: extent {} of axis {} is negative", extent,
                  axis);
    }
    plan.shape.push_back(extent);
  }
  const int lead = rank - value.rank();
  plan.source_strides = Dims::filled(rank, 0);
  for (int axis = 0; axis < value.rank(); ++axis) {
    const std::int64_t extent = value.shape()[axis];
    if (value_type.dims[axis] == 1) continue;
    if (extent != plan.shape[lead + axis]) {
      throw_error(ErrorKind::ShapeMismatch, "Alloc: value of shape {} does not broadcast to {}",
                  value.shape().to_string(), plan.shape.to_string());
    }
    plan.source_strides[lead + axis] = value.strides()[axis];
  }
  return plan;
}

// Steps `index` to the next position over axes 0..last (the last fastest), moving `offset`, the
// matching position in value, by the plan's strides.
void advance(const AllocPlan& plan, int last, std::array<std::int64_t, kMaxRank>& index,
             std::int64_t& offset) {
  for (int axis = last; axis >= 0; --axis) {
    const auto slot = static_cast<std::size_t>(axis);
    ++index[slot];
    offset += plan.source_strides[axis];
    if (index[slot] < plan.shape[axis]) return;
    offset -= plan.source_strides[axis] * plan.shape[axis];
    index[slot] = 0;
  }
}

// Writes value broadcast into `out` element by element: any strides.
void fill_by_index(const Tensor& value, const AllocPlan& plan, Tensor& out) {
  const int rank = plan.shape.rank();
  const std::int64_t count = out.numel();
  visit_dtype(value.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* source = static_cast<const T*>(value.raw_data());
    T* data = static_cast<T*>(out.raw_data());
    std::array<std::int64_t, kMaxRank> index{};
    std::int64_t offset = 0;
    for (std::int64_t flat = 0; flat < count; ++flat) {
      data[flat] = source[offset];
      advance(plan, rank - 1, index, offset);
    }
  });
}

void compute_alloc_reference(KernelContext& ctx) {
  const AllocPlan plan = plan_alloc(ctx);
  Tensor& out = ctx.allocate_output(0, ctx.input(0).dtype(), plan.shape);
  if (out.numel() > 0) fill_by_index(ctx.input(0), plan, out);
}

// The common Allocs are a scalar broadcast (zeros, ones: the gradient of a slice starts from
// one), a fill; a value whose last axis is dense is copied a row at a time.
void compute_alloc_fast(KernelContext& ctx) {
  const AllocPlan plan = plan_alloc(ctx);
  const Tensor& value = ctx.input(0);
  Tensor& out = ctx.allocate_output(0, value.dtype(), plan.shape);
  const std::int64_t count = out.numel();
  if (count == 0) return;
  const int rank = plan.shape.rank();
  const bool one_value =
      std::ranges::all_of(plan.source_strides, [](std::int64_t stride) { return stride == 0; });
  if (one_value) {
    visit_dtype(value.dtype(), [&](auto tag) {
      using T = decltype(tag);
      std::fill_n(static_cast<T*>(out.raw_data()), count, *static_cast<const T*>(value.raw_data()));
    });
    return;
  }
  if (plan.source_strides[rank - 1] != 1) {
    fill_by_index(value, plan, out);
    return;
  }
  const std::int64_t row = plan.shape[rank - 1];
  const std::int64_t item = static_cast<std::int64_t>(dtype_size(value.dtype()));
  const auto* source = static_cast<const std::byte*>(value.raw_data());
  auto* data = static_cast<std::byte*>(out.raw_data());
  std::array<std::int64_t, kMaxRank> index{};
  std::int64_t offset = 0;  // in elements of value
  for (std::int64_t start = 0; start < count; start += row) {
    std::memcpy(data + start * item, source + offset * item, static_cast<std::size_t>(row * item));
    advance(plan, rank - 2, index, offset);
  }
}

std::vector<Variable> pullback_alloc(const PullbackContext& ctx) {
  std::vector<Variable> grads(ctx.inputs.size());
  if (is_floating(ctx.inputs[0].dtype())) {
    grads[0] = detail::sum_to_type(ctx.output_grads[0], ctx.inputs[0].type());
  }
  return grads;
}

Cost alloc_cost(const CostContext& ctx) {
  return Cost{0, static_cast<double>(ctx.output_shapes[0].product()) *
                     static_cast<double>(dtype_size(ctx.input_dtypes[0]))};
}

// Static extents where known, Shape_i where not.
std::vector<DimArg> dims_of(const Variable& x) {
  std::vector<DimArg> dims;
  for (int axis = 0; axis < x.rank(); ++axis) {
    const std::int64_t extent = x.type().dims[axis];
    if (extent == kUnknownDim) {
      dims.emplace_back(shape_i(x, axis));
    } else {
      dims.emplace_back(extent);
    }
  }
  return dims;
}
}  // namespace

void register_alloc(OpRegistry& registry) {
  registry.add({.name = "Alloc",
                .family = "Alloc",
                .summary = "a value broadcast to a shape given by integer scalars",
                .num_inputs = -1,
                .infer = infer_alloc,
                .reference = {"ref", compute_alloc_reference},
                .fast = {"cpu", compute_alloc_fast},
                .pullback = pullback_alloc,
                .cost = alloc_cost});
}

}  // namespace tscope::ops

namespace tscope {

Variable DimArg::as_variable() const {
  if (variable_.defined()) return variable_;
  return constant(Tensor::scalar(static_cast<double>(extent_), DType::Int64));
}

Variable alloc(const Variable& value,
               const std::vector<DimArg>& dims,
               const std::source_location& location) {
  std::vector<Variable> inputs{value};
  for (const DimArg& dim : dims) inputs.push_back(dim.as_variable());
  return apply_op1(op_def("Alloc"), std::move(inputs), Attrs{}, location);
}

Variable zeros(const std::vector<DimArg>& dims, DType dtype, const std::source_location& location) {
  ProvenanceScope scope("zeros", location);
  return alloc(constant(Tensor::scalar(0.0, dtype)), dims, location);
}

Variable ones(const std::vector<DimArg>& dims, DType dtype, const std::source_location& location) {
  ProvenanceScope scope("ones", location);
  return alloc(constant(Tensor::scalar(1.0, dtype)), dims, location);
}

Variable fill(const Variable& like, const Variable& value, const std::source_location& location) {
  ProvenanceScope scope("fill", location);
  return alloc(value, ops::dims_of(like), location);
}

Variable zeros_like(const Variable& x, const std::source_location& location) {
  ProvenanceScope scope("zeros_like", location);
  return alloc(constant(Tensor::scalar(0.0, x.dtype())), ops::dims_of(x), location);
}

Variable ones_like(const Variable& x, const std::source_location& location) {
  ProvenanceScope scope("ones_like", location);
  return alloc(constant(Tensor::scalar(1.0, x.dtype())), ops::dims_of(x), location);
}

}  // namespace tscope
