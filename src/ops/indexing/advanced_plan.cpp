// SPDX-License-Identifier: Apache-2.0
#include "advanced_plan.h"

#include <fmt/format.h>

#include <new>

#include "tscope/core/checked_math.h"

namespace tscope::ops::detail {
namespace {
struct ArrayAxes {
  std::vector<int> axes;  // input axes indexed by an integer array, in entry order
  int first = -1;
};

ArrayAxes array_axes(std::string_view op_name, const std::vector<SpecEntry>& entries) {
  ArrayAxes result;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const SpecEntry& entry = entries[i];
    if (entry.kind == EntryKind::IntegerArray) {
      result.axes.push_back(static_cast<int>(i));
      continue;
    }
    if (entry.start.source == BoundSource::Symbolic || entry.stop.source == BoundSource::Symbolic ||
        entry.step.source == BoundSource::Symbolic) {
      throw_error(ErrorKind::Unsupported,
                  "{}: slice on axis {} has a symbolic part; integer-array indexing supports "
                  "slices with constant parts only",
                  op_name, i);
    }
  }
  for (std::size_t k = 1; k < result.axes.size(); ++k) {
    if (result.axes[k] != result.axes[k - 1] + 1) {
      throw_error(ErrorKind::Unsupported,
                  "{}: integer arrays on axes {} and {} are separated by a slice; only "
                  "consecutive integer-array indices are supported",
                  op_name, result.axes[k - 1], result.axes[k]);
    }
  }
  if (!result.axes.empty()) result.first = result.axes.front();
  return result;
}

// NumPy broadcast of index-array dims known at build time; kUnknownDim where it depends on
// values seen only at call time.
Dims broadcast_static(std::string_view op_name, std::span<const Variable> arrays) {
  int rank = 0;
  for (const Variable& array : arrays) rank = std::max(rank, array.rank());
  Dims dims = Dims::filled(rank, 1);
  for (int axis = 0; axis < rank; ++axis) {
    bool unknown = false;
    std::int64_t known = 1;
    for (const Variable& array : arrays) {
      const int lead = rank - array.rank();
      if (axis < lead) continue;
      const std::int64_t dim = array.type().dims[axis - lead];
      if (dim == kUnknownDim) {
        unknown = true;
      } else if (dim != 1) {
        if (known != 1 && known != dim) {
          throw_error(ErrorKind::ShapeMismatch,
                      "{}: index arrays do not broadcast together (axis {}: {} vs {})", op_name,
                      axis, known, dim);
        }
        known = dim;
      }
    }
    dims[axis] = known != 1 ? known : (unknown ? kUnknownDim : 1);
  }
  return dims;
}
}  // namespace

Dims infer_advanced_dims(std::string_view op_name,
                         const Type& x,
                         const std::vector<SpecEntry>& entries,
                         std::span<const Variable> index_inputs) {
  check_symbolic_inputs(op_name, x, entries, index_inputs);
  const ArrayAxes arrays = array_axes(op_name, entries);
  // The slice axes' dims: array entries behave like dropped (integer) axes here.
  std::vector<SpecEntry> slices_only = entries;
  for (SpecEntry& entry : slices_only) {
    if (entry.kind == EntryKind::IntegerArray) entry = SpecEntry{EntryKind::Integer, {}, {}, {}};
  }
  const Dims slice_dims = infer_basic_dims(op_name, x.dims, slices_only);
  if (arrays.axes.empty()) return slice_dims;
  const Dims batch = broadcast_static(op_name, index_inputs);
  Dims dims;
  for (int axis = 0; axis < arrays.first; ++axis) dims.push_back(slice_dims[axis]);
  for (std::int64_t dim : batch) dims.push_back(dim);
  for (int axis = arrays.first; axis < slice_dims.rank(); ++axis) dims.push_back(slice_dims[axis]);
  return dims;
}

AdvancedPlan plan_advanced(const KernelContext& ctx,
                           const Dims& shape,
                           const Dims& strides,
                           const std::vector<SpecEntry>& entries,
                           int first_index_input) {
  const std::string_view op_name = ctx.node != nullptr ? ctx.node->op().name : "indexing";
  const ArrayAxes arrays = array_axes(op_name, entries);
  const int array_count = static_cast<int>(arrays.axes.size());

  // Broadcast shape of the index arrays (rank 0 with one element when there are none).
  Dims batch;
  for (int k = 0; k < array_count; ++k) {
    try {
      batch = broadcast_shapes(batch, ctx.input(first_index_input + k).shape());
    } catch (Error& error) {
      error.add_context(fmt::format("{}: broadcasting the index arrays", op_name));
      if (ctx.node != nullptr) error.add_context("in " + ctx.node->describe());
      throw;
    }
  }
  // Index arrays of fitting sizes can broadcast to a count that does not fit.
  const std::int64_t batch_count =
      checked_product(batch, fmt::format("{}: the broadcast index arrays", op_name));
  // values[k][b]: the (non-negative) index of array k at broadcast position b.
  std::vector<std::vector<std::int64_t>> values(static_cast<std::size_t>(array_count));
  for (int k = 0; k < array_count; ++k) {
    const Tensor& array = ctx.input(first_index_input + k);
    const int axis = arrays.axes[static_cast<std::size_t>(k)];
    const std::vector<std::int64_t> own = checked_indices(ctx, array, axis, shape[axis]);
    Dims own_strides = Dims::filled(batch.rank(), 0);
    const Dims contiguous = contiguous_strides(array.shape());
    const int lead = batch.rank() - array.rank();
    for (int a = 0; a < array.rank(); ++a) {
      if (array.shape()[a] != 1) own_strides[lead + a] = contiguous[a];
    }
    auto& broadcast = values[static_cast<std::size_t>(k)];
    try {
      broadcast.resize(static_cast<std::size_t>(batch_count));
    } catch (const std::bad_alloc&) {
      throw_error(ErrorKind::OutOfMemory, "{}: out of memory allocating {} indices of {}",
                  op_name, batch_count, batch.to_string());
    }
    for (std::int64_t b = 0; b < batch_count; ++b) {
      broadcast[static_cast<std::size_t>(b)] =
          own[static_cast<std::size_t>(strided_offset(batch, own_strides, b))];
    }
  }

  // Output axes: slice axes before the arrays, the broadcast axes, the remaining slice axes.
  struct OutputAxis {
    int input_axis = -1;  // -1: a broadcast axis of the index arrays
    ResolvedAxis slice;
    std::int64_t batch_stride = 0;  // row-major stride inside `batch`
  };
  std::vector<OutputAxis> layout;
  auto add_slice_axis = [&](int axis) {
    if (arrays.first >= 0 && axis >= arrays.first && axis < arrays.first + array_count) return;
    OutputAxis out_axis;
    out_axis.input_axis = axis;
    if (axis < static_cast<int>(entries.size())) {
      const SpecEntry& entry = entries[static_cast<std::size_t>(axis)];
      const std::int64_t* start =
          entry.start.source == BoundSource::Constant ? &entry.start.value : nullptr;
      const std::int64_t* stop =
          entry.stop.source == BoundSource::Constant ? &entry.stop.value : nullptr;
      const std::int64_t step = entry.step.source == BoundSource::Constant ? entry.step.value : 1;
      out_axis.slice = resolve_slice(shape[axis], start, stop, step);
    } else {
      out_axis.slice = {0, 1, shape[axis], true};
    }
    layout.push_back(out_axis);
  };
  const int before = arrays.first >= 0 ? arrays.first : shape.rank();
  for (int axis = 0; axis < before; ++axis) add_slice_axis(axis);
  if (arrays.first >= 0) {
    const Dims batch_strides = contiguous_strides(batch);
    for (int b = 0; b < batch.rank(); ++b) {
      OutputAxis out_axis;
      out_axis.slice = {0, 1, batch[b], true};
      out_axis.batch_stride = batch_strides[b];
      layout.push_back(out_axis);
    }
  }
  for (int axis = before; axis < shape.rank(); ++axis) add_slice_axis(axis);

  AdvancedPlan plan;
  for (const OutputAxis& out_axis : layout) plan.output_shape.push_back(out_axis.slice.length);
  const std::int64_t count = plan.output_shape.product();
  plan.offsets.resize(static_cast<std::size_t>(count));
  for (std::int64_t flat = 0; flat < count; ++flat) {
    std::int64_t remaining = flat;
    std::int64_t offset = 0;
    std::int64_t batch_position = 0;
    for (int o = static_cast<int>(layout.size()) - 1; o >= 0; --o) {
      const OutputAxis& out_axis = layout[static_cast<std::size_t>(o)];
      const std::int64_t position = remaining % out_axis.slice.length;
      remaining /= out_axis.slice.length;
      if (out_axis.input_axis < 0) {
        batch_position += position * out_axis.batch_stride;
      } else {
        offset +=
            (out_axis.slice.start + position * out_axis.slice.step) * strides[out_axis.input_axis];
      }
    }
    for (int k = 0; k < array_count; ++k) {
      offset += values[static_cast<std::size_t>(k)][static_cast<std::size_t>(batch_position)] *
                strides[arrays.axes[static_cast<std::size_t>(k)]];
    }
    plan.offsets[static_cast<std::size_t>(flat)] = offset;
  }
  return plan;
}

}  // namespace tscope::ops::detail
