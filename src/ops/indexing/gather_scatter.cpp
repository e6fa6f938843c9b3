// SPDX-License-Identifier: Apache-2.0
// gather_elements, scatter_elements, gather_nd and scatter_nd (ONNX GatherElements,
// ScatterElements, GatherND, ScatterND) as composites of integer-array indexing: every indexed
// axis gets an index array, the arrays broadcast against each other, and their broadcast shape is
// the result's. Axes the ONNX
// op pairs positionally get a constant arange shaped to broadcast along that axis only. Gradients
// come from AdvancedSubtensor / AdvancedIncSubtensor; range checks (IndexOutOfRange naming the
// node, the axis and the index) from their kernels.
#include "tscope/core/error.h"
#include "tscope/graph/constructors.h"
#include "tscope/graph/provenance.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/shape.h"

namespace tscope {
namespace {

/// 0 .. extent-1 as an int64 constant of rank `rank`, laid along `axis` (extent 1 elsewhere).
/// Declared extents come from users (and models): a huge one is refused, not allocated.
Variable arange_along(std::int64_t extent, int axis, int rank) {
  constexpr std::int64_t kMaxArange = std::int64_t{1} << 24;
  if (extent > kMaxArange) {
    throw_error(ErrorKind::Unsupported,
                "an index array of {} elements along axis {} (the composite builds at most 2^24)",
                extent, axis);
  }
  Dims dims = Dims::filled(rank, 1);
  dims[axis] = extent;
  std::vector<std::int64_t> values(static_cast<std::size_t>(extent));
  for (std::int64_t i = 0; i < extent; ++i) values[static_cast<std::size_t>(i)] = i;
  return constant(Tensor::from_vector<std::int64_t>(dims, values));
}

void check_integer_indices(std::string_view op, const Variable& indices) {
  if (is_floating(indices.dtype()) || indices.dtype() == DType::Bool) {
    throw_error(ErrorKind::TypeMismatch, "{}: indices have dtype {}; expected an integer dtype", op,
                dtype_name(indices.dtype()));
  }
}

std::int64_t static_extent(std::string_view op, const Variable& indices, int axis) {
  const std::int64_t extent = indices.type().dims[axis];
  if (extent == kUnknownDim) {
    throw_error(ErrorKind::Unsupported,
                "{}: indices {} have an unknown extent on axis {}; the composite needs it at "
                "graph-build time",
                op, indices.type().dims.to_string(), axis);
  }
  return extent;
}

/// The index list of gather_elements / scatter_elements: `indices` on `axis`, aranges elsewhere.
IndexList element_index_list(std::string_view op,
                             const Variable& x,
                             const Variable& indices,
                             std::int64_t axis) {
  check_integer_indices(op, indices);
  const int rank = x.rank();
  if (indices.rank() != rank) {
    throw_error(ErrorKind::ShapeMismatch, "{}: indices {} and data {} differ in rank", op,
                indices.type().dims.to_string(), x.type().dims.to_string());
  }
  if (axis < -rank || axis >= rank) {
    throw_error(ErrorKind::IndexOutOfRange, "{}: axis {} is out of range for rank {}", op, axis,
                rank);
  }
  if (axis < 0) axis += rank;
  IndexList list;
  for (int i = 0; i < rank; ++i) {
    if (i == axis) {
      list.emplace_back(indices);
      continue;
    }
    const std::int64_t extent = static_extent(op, indices, i);
    const std::int64_t available = x.type().dims[i];
    if (available != kUnknownDim && extent > available) {
      throw_error(ErrorKind::ShapeMismatch,
                  "{}: indices {} are longer than data {} on axis {} ({} > {})", op,
                  indices.type().dims.to_string(), x.type().dims.to_string(), i, extent, available);
    }
    list.emplace_back(arange_along(extent, i, rank));
  }
  return list;
}

/// The index list of gather_nd / scatter_nd: aranges on the batch axes, then one array per
/// coordinate (indices[..., k]).
IndexList nd_index_list(std::string_view op,
                        const Variable& x,
                        const Variable& indices,
                        std::int64_t batch_dims,
                        const std::source_location& location) {
  check_integer_indices(op, indices);
  const int index_rank = indices.rank();
  if (index_rank < 1) {
    throw_error(ErrorKind::ShapeMismatch, "{}: indices must have rank >= 1, got a scalar", op);
  }
  if (batch_dims < 0 || batch_dims >= index_rank || batch_dims >= x.rank()) {
    throw_error(ErrorKind::InvalidArgument,
                "{}: batch_dims {} must lie in [0, min(rank of indices {}, rank of data {}))", op,
                batch_dims, index_rank, x.rank());
  }
  const std::int64_t depth = static_extent(op, indices, index_rank - 1);
  if (depth < 1 || batch_dims + depth > x.rank()) {
    throw_error(ErrorKind::ShapeMismatch,
                "{}: {} batch axes and coordinates of length {} do not fit data {} of rank {}; "
                "expected a length in [1, rank - batch_dims]",
                op, batch_dims, depth, x.type().dims.to_string(), x.rank());
  }
  const int batch = static_cast<int>(batch_dims);
  IndexList list;
  for (int axis = 0; axis < batch; ++axis) {
    const std::int64_t extent = static_extent(op, indices, axis);
    const std::int64_t available = x.type().dims[axis];
    if (available != kUnknownDim && available != extent) {
      throw_error(ErrorKind::ShapeMismatch,
                  "{}: batch axis {} has extent {} in indices {} but {} in data {}", op, axis,
                  extent, indices.type().dims.to_string(), available, x.type().dims.to_string());
    }
    list.emplace_back(arange_along(extent, axis, index_rank - 1));
  }
  IndexList coordinate(static_cast<std::size_t>(index_rank - 1), Index(slice()));
  coordinate.emplace_back(0);
  for (std::int64_t k = 0; k < depth; ++k) {
    coordinate.back() = Index(k);
    list.emplace_back(subtensor(indices, coordinate, location));
  }
  return list;
}

/// x with `updates` written or added at advanced_subtensor(x, list).
Variable scatter(const Variable& x,
                 const IndexList& list,
                 const Variable& updates,
                 ScatterReduction reduction,
                 const std::source_location& location) {
  if (reduction == ScatterReduction::Add) return advanced_inc_subtensor(x, list, updates, location);
  // Written elements: the scatter of the updates into zeros replaces x where a mask scattered the
  // same way is set. Gradients follow: x receives g off the mask, updates g at their positions.
  const Variable written = advanced_inc_subtensor(zeros_like(x, location), list, updates, location);
  const Variable hits =
      advanced_inc_subtensor(zeros_like(x, location), list, ones_like(updates, location), location);
  return switch_(gt(hits, 0.0, location), written, x, location);
}

}  // namespace

Variable gather_elements(const Variable& x,
                         const Variable& indices,
                         std::int64_t axis,
                         const std::source_location& location) {
  ProvenanceScope scope("gather_elements", location);
  return advanced_subtensor(x, element_index_list("gather_elements", x, indices, axis), location);
}

Variable scatter_elements(const Variable& x,
                          const Variable& indices,
                          const Variable& updates,
                          std::int64_t axis,
                          ScatterReduction reduction,
                          const std::source_location& location) {
  ProvenanceScope scope("scatter_elements", location);
  const IndexList list = element_index_list("scatter_elements", x, indices, axis);
  if (updates.rank() != indices.rank()) {
    throw_error(ErrorKind::ShapeMismatch,
                "scatter_elements: updates {} and indices {} differ in rank",
                updates.type().dims.to_string(), indices.type().dims.to_string());
  }
  return scatter(x, list, updates, reduction, location);
}

Variable gather_nd(const Variable& x,
                   const Variable& indices,
                   std::int64_t batch_dims,
                   const std::source_location& location) {
  ProvenanceScope scope("gather_nd", location);
  return advanced_subtensor(x, nd_index_list("gather_nd", x, indices, batch_dims, location),
                            location);
}

Variable scatter_nd(const Variable& x,
                    const Variable& indices,
                    const Variable& updates,
                    ScatterReduction reduction,
                    const std::source_location& location) {
  ProvenanceScope scope("scatter_nd", location);
  const IndexList list = nd_index_list("scatter_nd", x, indices, 0, location);
  return scatter(x, list, updates, reduction, location);
}

}  // namespace tscope
