// SPDX-License-Identifier: Apache-2.0
#include "index_spec.h"

#include <fmt/format.h>

#include <algorithm>

#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope::ops::detail {
namespace {
constexpr int kSlotsPerEntry = 3;

SpecBound lower_bound(const IndexBound& bound, std::vector<Variable>& symbolic_inputs) {
  if (bound.is_omitted()) return {};
  if (bound.is_constant()) return {BoundSource::Constant, bound.constant()};
  symbolic_inputs.push_back(bound.variable());
  return {BoundSource::Symbolic, static_cast<std::int64_t>(bound.variable().dtype())};
}

std::string bound_string(const SpecBound& bound) {
  switch (bound.source) {
    case BoundSource::Omitted:
      return "";
    case BoundSource::Constant:
      return std::to_string(bound.value);
    case BoundSource::Symbolic:
      break;
  }
  return std::string(dtype_name(static_cast<DType>(bound.value)));
}

IndexBound bound_from(const SpecBound& bound, std::span<const Variable> inputs, std::size_t& next) {
  switch (bound.source) {
    case BoundSource::Omitted:
      return none;
    case BoundSource::Constant:
      return bound.value;
    case BoundSource::Symbolic:
      break;
  }
  return inputs[next++];
}

void check_integer_variable(std::string_view op_name, const Variable& index, bool scalar_only) {
  if (!is_integral(index.dtype())) {
    throw_error(ErrorKind::TypeMismatch, "{}: index {} has dtype {}; expected an integer dtype",
                op_name, index.to_string(), dtype_name(index.dtype()));
  }
  if (scalar_only && index.rank() != 0) {
    throw_error(ErrorKind::TypeMismatch,
                "{}: index {} has type {}; expected a rank-0 integer (use advanced_subtensor for "
                "integer arrays)",
                op_name, index.to_string(), index.type().to_string());
  }
}

std::int64_t normalized_index(std::int64_t index, std::int64_t length) {
  return index < 0 ? index + length : index;
}
}  // namespace

LoweredIndex lower_index(const IndexList& indices, bool allow_arrays) {
  // Types and the count of entries are checked by the op's type rule, so errors name the node.
  LoweredIndex lowered;
  for (const Index& index : indices) {
    SpecEntry entry;
    if (index.is_slice()) {
      const Slice& slice = index.as_slice();
      entry.kind = EntryKind::Slice;
      entry.start = lower_bound(slice.start, lowered.symbolic_inputs);
      entry.stop = lower_bound(slice.stop, lowered.symbolic_inputs);
      entry.step = lower_bound(slice.step, lowered.symbolic_inputs);
    } else if (allow_arrays) {
      const IndexBound& integer = index.as_integer();
      entry.kind = EntryKind::IntegerArray;
      lowered.symbolic_inputs.push_back(
          integer.is_variable()
              ? integer.variable()
              : constant(Tensor::scalar(static_cast<double>(integer.constant()), DType::Int64)));
      entry.start = {BoundSource::Symbolic,
                     static_cast<std::int64_t>(lowered.symbolic_inputs.back().dtype())};
    } else {
      entry.kind = EntryKind::Integer;
      entry.start = lower_bound(index.as_integer(), lowered.symbolic_inputs);
    }
    lowered.entries.push_back(entry);
  }
  return lowered;
}

void encode_entries(const std::vector<SpecEntry>& entries, Attrs& attrs) {
  std::vector<std::int64_t> kinds;
  std::vector<std::int64_t> sources;
  std::vector<std::int64_t> values;
  for (const SpecEntry& entry : entries) {
    kinds.push_back(static_cast<std::int64_t>(entry.kind));
    for (const SpecBound* bound : {&entry.start, &entry.stop, &entry.step}) {
      sources.push_back(static_cast<std::int64_t>(bound->source));
      values.push_back(bound->value);
    }
  }
  attrs.set("index_kinds", kinds);
  attrs.set("bound_sources", sources);
  attrs.set("bound_values", values);
}

std::vector<SpecEntry> decode_entries(const Attrs& attrs) {
  const auto& kinds = attrs.get_ints("index_kinds");
  const auto& sources = attrs.get_ints("bound_sources");
  const auto& values = attrs.get_ints("bound_values");
  TSCOPE_CHECK(sources.size() == kinds.size() * kSlotsPerEntry && values.size() == sources.size(),
               "indexing attributes of inconsistent length");
  std::vector<SpecEntry> entries(kinds.size());
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    entries[i].kind = static_cast<EntryKind>(kinds[i]);
    SpecBound* bounds[] = {&entries[i].start, &entries[i].stop, &entries[i].step};
    for (std::size_t slot = 0; slot < kSlotsPerEntry; ++slot) {
      bounds[slot]->source = static_cast<BoundSource>(sources[i * kSlotsPerEntry + slot]);
      bounds[slot]->value = values[i * kSlotsPerEntry + slot];
    }
  }
  return entries;
}

IndexList index_list_from(const std::vector<SpecEntry>& entries,
                          std::span<const Variable> symbolic_inputs) {
  IndexList indices;
  std::size_t next = 0;
  for (const SpecEntry& entry : entries) {
    if (entry.kind == EntryKind::Slice) {
      IndexBound start = bound_from(entry.start, symbolic_inputs, next);
      IndexBound stop = bound_from(entry.stop, symbolic_inputs, next);
      IndexBound step = bound_from(entry.step, symbolic_inputs, next);
      indices.emplace_back(slice(start, stop, step));
    } else {
      const IndexBound integer = bound_from(entry.start, symbolic_inputs, next);
      if (integer.is_constant()) {
        indices.emplace_back(integer.constant());
      } else {
        indices.emplace_back(integer.variable());
      }
    }
  }
  return indices;
}

std::string print_entries(const std::vector<SpecEntry>& entries) {
  std::string text;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) text += ", ";
    const SpecEntry& entry = entries[i];
    if (entry.kind != EntryKind::Slice) {
      text += bound_string(entry.start);
      continue;
    }
    text += bound_string(entry.start) + ":" + bound_string(entry.stop);
    if (entry.step.source != BoundSource::Omitted) text += ":" + bound_string(entry.step);
  }
  return text;
}

int count_symbolic_inputs(const std::vector<SpecEntry>& entries) {
  int count = 0;
  for (const SpecEntry& entry : entries) {
    for (const SpecBound* bound : {&entry.start, &entry.stop, &entry.step}) {
      if (bound->source == BoundSource::Symbolic) ++count;
    }
  }
  return count;
}

Dims infer_basic_dims(std::string_view op_name,
                      const Dims& input_dims,
                      const std::vector<SpecEntry>& entries) {
  Dims dims;
  for (int axis = 0; axis < input_dims.rank(); ++axis) {
    const std::int64_t length = input_dims[axis];
    if (axis >= static_cast<int>(entries.size())) {
      dims.push_back(length);
      continue;
    }
    const SpecEntry& entry = entries[static_cast<std::size_t>(axis)];
    if (entry.kind != EntryKind::Slice) {
      if (entry.start.source == BoundSource::Constant && length != kUnknownDim) {
        const std::int64_t index = normalized_index(entry.start.value, length);
        if (index < 0 || index >= length) {
          throw_error(ErrorKind::IndexOutOfRange,
                      "{}: index {} is out of range for axis {} of length {} (input dims {})",
                      op_name, entry.start.value, axis, length, input_dims.to_string());
        }
      }
      continue;
    }
    if (entry.step.source == BoundSource::Constant && entry.step.value == 0) {
      throw_error(ErrorKind::InvalidArgument, "{}: slice step on axis {} is zero", op_name, axis);
    }
    const bool all_static = entry.start.source != BoundSource::Symbolic &&
                            entry.stop.source != BoundSource::Symbolic &&
                            entry.step.source != BoundSource::Symbolic;
    if (!all_static || length == kUnknownDim) {
      dims.push_back(kUnknownDim);
      continue;
    }
    const std::int64_t* start =
        entry.start.source == BoundSource::Constant ? &entry.start.value : nullptr;
    const std::int64_t* stop =
        entry.stop.source == BoundSource::Constant ? &entry.stop.value : nullptr;
    const std::int64_t step = entry.step.source == BoundSource::Constant ? entry.step.value : 1;
    dims.push_back(resolve_slice(length, start, stop, step).length);
  }
  return dims;
}

void check_symbolic_inputs(std::string_view op_name,
                           const Type& input_type,
                           const std::vector<SpecEntry>& entries,
                           std::span<const Variable> symbolic_inputs) {
  if (static_cast<int>(entries.size()) > input_type.rank()) {
    throw_error(ErrorKind::IndexOutOfRange, "{}: {} indices given for {} of rank {}", op_name,
                entries.size(), input_type.to_string(), input_type.rank());
  }
  TSCOPE_CHECK(static_cast<int>(symbolic_inputs.size()) == count_symbolic_inputs(entries),
               "indexing node with a wrong number of index inputs");
  std::size_t next = 0;
  for (const SpecEntry& entry : entries) {
    for (const SpecBound* bound : {&entry.start, &entry.stop, &entry.step}) {
      if (bound->source != BoundSource::Symbolic) continue;
      check_integer_variable(op_name, symbolic_inputs[next++],
                             /*scalar_only=*/entry.kind != EntryKind::IntegerArray);
    }
  }
}

ResolvedAxis resolve_slice(std::int64_t length,
                           const std::int64_t* start,
                           const std::int64_t* stop,
                           std::int64_t step) {
  // A step longer than the axis selects at most one element, as does the axis length itself; the
  // clamp keeps every later product and sum far from int64 overflow.
  const std::int64_t limit = std::max<std::int64_t>(length, 1);
  step = std::clamp(step, -limit, limit);
  ResolvedAxis axis;
  axis.step = step;
  if (step > 0) {
    std::int64_t first = start ? normalized_index(*start, length) : 0;
    std::int64_t end = stop ? normalized_index(*stop, length) : length;
    first = std::clamp<std::int64_t>(first, 0, length);
    end = std::clamp<std::int64_t>(end, 0, length);
    axis.start = first;
    axis.length = end > first ? (end - first + step - 1) / step : 0;
  } else {
    // -1 stands for "before the first element" when walking backwards.
    std::int64_t first = start ? normalized_index(*start, length) : length - 1;
    std::int64_t end = stop ? normalized_index(*stop, length) : -1;
    first = std::clamp<std::int64_t>(first, -1, length - 1);
    end = std::clamp<std::int64_t>(end, -1, length - 1);
    axis.start = first;
    axis.length = first > end ? (first - end - step - 1) / -step : 0;
  }
  if (axis.length == 0) axis.start = 0;
  return axis;
}

std::vector<ResolvedAxis> resolve_basic(const KernelContext& ctx,
                                        const Dims& shape,
                                        const std::vector<SpecEntry>& entries,
                                        int first_symbolic_input) {
  const std::string_view op_name = ctx.node != nullptr ? ctx.node->op().name : "indexing";
  int next_input = first_symbolic_input;
  auto read = [&](const SpecBound& bound, std::int64_t& value) -> const std::int64_t* {
    if (bound.source == BoundSource::Omitted) return nullptr;
    value = bound.source == BoundSource::Constant ? bound.value
                                                  : read_index_scalar(ctx.input(next_input++));
    return &value;
  };
  std::vector<ResolvedAxis> axes;
  for (int axis = 0; axis < shape.rank(); ++axis) {
    const std::int64_t length = shape[axis];
    if (axis >= static_cast<int>(entries.size())) {
      axes.push_back({0, 1, length, true});
      continue;
    }
    const SpecEntry& entry = entries[static_cast<std::size_t>(axis)];
    std::int64_t start_value = 0;
    std::int64_t stop_value = 0;
    std::int64_t step_value = 1;
    const std::int64_t* start = read(entry.start, start_value);
    if (entry.kind != EntryKind::Slice) {
      const std::int64_t index = normalized_index(start_value, length);
      if (index < 0 || index >= length) {
        throw node_error(ctx, ErrorKind::IndexOutOfRange,
                         fmt::format("{}: index {} is out of range for axis {} of length {} "
                                     "(input shape {})",
                                     op_name, start_value, axis, length, shape.to_string()));
      }
      axes.push_back({index, 1, 1, false});
      continue;
    }
    const std::int64_t* stop = read(entry.stop, stop_value);
    if (read(entry.step, step_value) != nullptr && step_value == 0) {
      throw node_error(ctx, ErrorKind::InvalidArgument,
                       fmt::format("{}: slice step on axis {} is zero", op_name, axis));
    }
    axes.push_back(resolve_slice(length, start, stop, step_value));
  }
  return axes;
}

Tensor basic_view(const Tensor& x, const std::vector<ResolvedAxis>& axes) {
  Dims shape;
  Dims strides;
  std::int64_t offset = x.offset();
  bool empty = false;
  for (int axis = 0; axis < x.rank(); ++axis) {
    const ResolvedAxis& resolved = axes[static_cast<std::size_t>(axis)];
    if (resolved.length == 0) empty = true;
    offset += resolved.start * x.strides()[axis];
    if (!resolved.kept) continue;
    shape.push_back(resolved.length);
    strides.push_back(resolved.step * x.strides()[axis]);
  }
  // An empty selection may start one past the end; keep its offset inside the buffer.
  return x.view(shape, strides, empty ? x.offset() : offset);
}

std::int64_t read_index_scalar(const Tensor& scalar) {
  return visit_dtype(scalar.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return static_cast<std::int64_t>(*static_cast<const T*>(scalar.raw_data()));
  });
}

void check_row_indices(std::string_view op_name, const Type& x, const Type& indices) {
  if (x.rank() < 1) {
    throw_error(ErrorKind::TypeMismatch, "{}: input {} has rank 0; expected rank >= 1", op_name,
                x.to_string());
  }
  if (indices.rank() != 1 || !is_integral(indices.dtype)) {
    throw_error(ErrorKind::TypeMismatch, "{}: indices {} must be an integer vector", op_name,
                indices.to_string());
  }
}

std::vector<std::int64_t> checked_indices(const KernelContext& ctx,
                                          const Tensor& indices,
                                          int axis,
                                          std::int64_t length) {
  const std::string_view op_name = ctx.node != nullptr ? ctx.node->op().name : "indexing";
  std::vector<std::int64_t> values(static_cast<std::size_t>(indices.numel()));
  visit_dtype(indices.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* data = static_cast<const T*>(indices.raw_data());
    for (std::int64_t i = 0; i < indices.numel(); ++i) {
      values[static_cast<std::size_t>(i)] =
          static_cast<std::int64_t>(data[strided_offset(indices.shape(), indices.strides(), i)]);
    }
  });
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::int64_t index = normalized_index(values[i], length);
    if (index < 0 || index >= length) {
      throw node_error(
          ctx, ErrorKind::IndexOutOfRange,
          fmt::format("{}: index {} (element {} of the index array of shape {}) is "
                      "out of range for axis {} of length {}",
                      op_name, values[i], i, indices.shape().to_string(), axis, length));
    }
    values[i] = index;
  }
  return values;
}

Error node_error(const KernelContext& ctx, ErrorKind kind, std::string message) {
  Error error(kind, std::move(message));
  if (ctx.node != nullptr) error.add_context("in " + ctx.node->describe());
  return error;
}

const Type& node_input_type(const KernelContext& ctx, int index) {
  TSCOPE_CHECK(ctx.node != nullptr, "indexing kernel run without its node");
  return ctx.node->input(index).type();
}

void check_value_fits_region(std::string_view op_name, const Type& value, const Dims& region,
                             std::string_view region_name) {
  const int lead = region.rank() - value.rank();
  bool fits = lead >= 0;
  for (int axis = 0; fits && axis < value.rank(); ++axis) {
    const std::int64_t value_dim = value.dims[axis];
    const std::int64_t region_dim = region[lead + axis];
    fits = value_dim == 1 || value_dim == kUnknownDim || region_dim == kUnknownDim ||
           value_dim == region_dim;
  }
  if (!fits) {
    throw_error(ErrorKind::ShapeMismatch, "{}: value {} does not broadcast to the selected {} {}",
                op_name, value.to_string(), region_name, region.to_string());
  }
}

std::int64_t strided_offset(const Dims& shape, const Dims& strides, std::int64_t flat) {
  std::int64_t offset = 0;
  for (int axis = shape.rank() - 1; axis >= 0; --axis) {
    const std::int64_t extent = shape[axis];
    offset += (flat % extent) * strides[axis];
    flat /= extent;
  }
  return offset;
}

Dims broadcast_strides(const KernelContext& ctx,
                       const Tensor& value,
                       const Type& value_type,
                       const Dims& target,
                       std::string_view what) {
  const std::string_view op_name = ctx.node != nullptr ? ctx.node->op().name : "indexing";
  const int lead = target.rank() - value.rank();
  auto mismatch = [&] {
    return node_error(ctx, ErrorKind::ShapeMismatch,
                      fmt::format("{}: {} of shape {} does not broadcast to the selected region "
                                  "{}; only missing leading axes and axes of static length 1 "
                                  "broadcast",
                                  op_name, what, value.shape().to_string(), target.to_string()));
  };
  if (lead < 0) throw mismatch();
  Dims strides = Dims::filled(target.rank(), 0);
  for (int axis = 0; axis < value.rank(); ++axis) {
    const std::int64_t extent = value.shape()[axis];
    if (extent == target[lead + axis]) {
      strides[lead + axis] = value.strides()[axis];
    } else if (extent != 1 || value_type.dims[axis] != 1) {
      throw mismatch();
    }
  }
  return strides;
}

}  // namespace tscope::ops::detail
