// SPDX-License-Identifier: Apache-2.0
// NonZero(x[, extents...]): the coordinates of x's nonzero (true) elements as an int64 matrix
// (x.rank(), n), row k holding axis k's coordinates in row-major order (numpy.nonzero stacked, as
// ONNX's NonZero). n is known only at run time unless x is a constant. The optional inputs are one
// integer scalar per axis of x, the extents x must have: NumPy's rule for a boolean index, which
// mask_coordinates() passes so that x[mask] with a mask of the wrong shape is an IndexOutOfRange
// error rather than a silent selection from fewer rows. The output is an integer: zero gradient.
#include <fmt/format.h>

#include <array>

#include "../shape/shape_values.h"
#include "index_spec.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/constructors.h"
#include "tscope/graph/op_registry.h"
#include "tscope/graph/provenance.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope::ops {
namespace {
// The number of nonzero elements of a constant, walking its strides.
std::int64_t count_nonzero(const Tensor& x) {
  std::int64_t count = 0;
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* data = static_cast<const T*>(x.raw_data());
    for (std::int64_t flat = 0; flat < x.numel(); ++flat) {
      if (data[detail::strided_offset(x.shape(), x.strides(), flat)] != T{}) ++count;
    }
  });
  return count;
}

[[noreturn]] void throw_mask_mismatch(const Dims& mask, int axis, std::int64_t extent) {
  throw_error(ErrorKind::IndexOutOfRange,
              "NonZero: a boolean index of shape {} does not match the indexed array along axis "
              "{}: the axis has extent {} but the index has {}",
              mask.to_string(), axis, extent, mask[axis]);
}

std::vector<Type> infer_nonzero(const InferContext& ctx) {
  const Type& x = ctx.input_type(0);
  if (x.rank() == 0) {
    throw_error(ErrorKind::TypeMismatch, "NonZero: x is {}; expected rank >= 1", x.to_string());
  }
  const int extents = ctx.num_inputs() - 1;
  if (extents != 0 && extents != x.rank()) {
    throw_error(ErrorKind::InvalidArgument,
                "NonZero: {} extents for x {}; expected none or one per axis", extents,
                x.to_string());
  }
  for (int axis = 0; axis < extents; ++axis) {
    const Variable& extent = ctx.inputs[static_cast<std::size_t>(axis + 1)];
    detail::require_integer(extent, 0, "a NonZero extent");
    const std::optional<std::int64_t> known = detail::static_scalar(extent);
    if (known && x.dims[axis] != kUnknownDim && *known != x.dims[axis]) {
      throw_mask_mismatch(x.dims, axis, *known);
    }
  }
  const Variable& source = ctx.inputs[0];
  const std::int64_t count = source.kind() == VariableKind::Constant
                                 ? count_nonzero(source.constant_value())
                                 : kUnknownDim;
  return {Type{DType::Int64, Dims{x.rank(), count}}};
}

void compute_nonzero(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  for (int axis = 0; axis + 1 < ctx.num_inputs; ++axis) {
    const std::int64_t extent = detail::read_index_scalar(ctx.input(axis + 1));
    if (extent != x.shape()[axis]) throw_mask_mismatch(x.shape(), axis, extent);
  }
  const std::int64_t count = count_nonzero(x);
  const int rank = x.rank();
  Tensor& out = ctx.allocate_output(0, DType::Int64, Dims{rank, count});
  auto* coordinates = static_cast<std::int64_t*>(out.raw_data());
  std::array<std::int64_t, kMaxRank> index{};
  std::int64_t found = 0;
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* data = static_cast<const T*>(x.raw_data());
    for (std::int64_t flat = 0; flat < x.numel(); ++flat) {
      std::int64_t offset = 0;
      for (int axis = 0; axis < rank; ++axis) offset += index[axis] * x.strides()[axis];
      if (data[offset] != T{}) {
        for (int axis = 0; axis < rank; ++axis) coordinates[axis * count + found] = index[axis];
        ++found;
      }
      for (int axis = rank - 1; axis >= 0; --axis) {
        if (++index[axis] < x.shape()[axis]) break;
        index[axis] = 0;
      }
    }
  });
}

Cost nonzero_cost(const CostContext& ctx) {
  const auto read = static_cast<double>(ctx.input_shapes[0].product());
  return Cost{read, read * static_cast<double>(dtype_size(ctx.input_dtypes[0])) +
                        8.0 * static_cast<double>(ctx.output_shapes[0].product())};
}
}  // namespace

void register_nonzero(OpRegistry& registry) {
  registry.add({.name = "NonZero",
                .family = "NonZero",
                .summary = "int64 coordinates (rank, n) of the nonzero elements",
                .num_inputs = -1,
                .traits = {.zero_gradient = true},
                .infer = infer_nonzero,
                .reference = {"ref", compute_nonzero},
                .cost = nonzero_cost});
}

}  // namespace tscope::ops

namespace tscope {

Variable nonzero(const Variable& x, const std::source_location& location) {
  return apply_op1(op_def("NonZero"), {x}, Attrs{}, location);
}

std::vector<Variable> mask_coordinates(const Variable& x,
                                       std::int64_t first_axis,
                                       const Variable& mask,
                                       const std::source_location& location) {
  ProvenanceScope scope("boolean_index", location);
  if (mask.dtype() != DType::Bool) {
    throw_error(ErrorKind::TypeMismatch, "boolean index: the mask is {}; expected a bool tensor",
                mask.type().to_string());
  }
  if (first_axis < 0 || mask.rank() < 1 || first_axis + mask.rank() > x.rank()) {
    throw_error(ErrorKind::IndexOutOfRange,
                "boolean index: a mask {} from axis {} does not fit x {}; expected rank >= 1 "
                "within x's axes",
                mask.type().to_string(), first_axis, x.type().to_string());
  }
  std::vector<Variable> inputs{mask};
  for (int axis = 0; axis < mask.rank(); ++axis) {
    const int x_axis = static_cast<int>(first_axis) + axis;
    const std::int64_t extent = x.type().dims[x_axis];
    inputs.push_back(extent == kUnknownDim
                         ? shape_i(x, x_axis, location)
                         : constant(Tensor::scalar(static_cast<double>(extent), DType::Int64)));
  }
  const Variable coordinates = apply_op1(op_def("NonZero"), std::move(inputs), Attrs{}, location);
  std::vector<Variable> rows;
  for (int axis = 0; axis < mask.rank(); ++axis) {
    rows.push_back(subtensor(coordinates, {axis}, location));
  }
  return rows;
}

}  // namespace tscope
