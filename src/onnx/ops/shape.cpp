// SPDX-License-Identifier: Apache-2.0
// ONNX shape and data-movement ops: Constant, ConstantOfShape, Shape, Size, Reshape, Flatten,
// Transpose, Squeeze, Unsqueeze, Concat, Split, Slice, Gather, GatherElements, GatherND,
// ScatterElements (and opset 9's Scatter), ScatterND, Expand, Tile, Range, NonZero.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "../converter.h"
#include "../reader.h"
#include "shape_builder.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/shape.h"

namespace tscope::onnx {
namespace {

using Outputs = std::vector<Variable>;

// The most elements one tensor built from a model's shape arguments may have (2^31).
constexpr std::int64_t kMaxImportElements = std::int64_t{1} << 31;
// Tile joins one copy per repeat; beyond this many a model is asking for something else.
constexpr std::int64_t kMaxJoinedCopies = 4096;

Variable int64_vector(const std::vector<std::int64_t>& values) {
  return constant(Tensor::from_vector<std::int64_t>({static_cast<std::int64_t>(values.size())}, values));
}

Outputs convert_constant(NodeContext& ctx) {
  if (ctx.has_attribute("value")) return {constant(ctx.attribute_tensor("value"))};
  if (ctx.has_attribute("value_float")) {
    return {constant(Tensor::scalar(ctx.attribute_float("value_float", 0), DType::Float32))};
  }
  if (ctx.has_attribute("value_int")) {
    return {constant(Tensor::scalar(static_cast<double>(ctx.attribute_int("value_int", 0)),
                                    DType::Int64))};
  }
  if (ctx.has_attribute("value_ints")) return {int64_vector(ctx.attribute_ints("value_ints", {}))};
  if (ctx.has_attribute("value_floats")) {
    const std::vector<double> values = ctx.attribute_floats("value_floats");
    std::vector<float> narrowed(values.begin(), values.end());
    return {constant(Tensor::from_vector<float>({static_cast<std::int64_t>(values.size())}, narrowed))};
  }
  ctx.unsupported("a Constant without a value, value_float(s) or value_int(s) attribute");
}

Outputs convert_constant_of_shape(NodeContext& ctx) {
  Tensor fill_value = Tensor::scalar(0.0, DType::Float32);
  if (ctx.has_attribute("value")) fill_value = ctx.attribute_tensor("value");
  if (fill_value.numel() != 1) ctx.unsupported("a ConstantOfShape value with more than one element");
  const std::vector<std::int64_t> extents = ctx.constant_ints(0, "shape");
  Dims dims;
  std::int64_t count = 1;
  for (std::int64_t extent : extents) {
    if (extent < 0) throw_error(ErrorKind::InvalidArgument, "negative extent {} in shape", extent);
    dims.push_back(extent);
    count = extent == 0 || count <= kMaxImportElements / extent ? count * extent : kMaxImportElements + 1;
  }
  // A model may ask for any size: materialise small fills now, and leave large ones to an Alloc
  // node that allocates when the function runs (found by fuzzing: a 2 GiB constant at import).
  if (count <= kMaxImportElements && count <= (std::int64_t{1} << 20)) {
    return {constant(Tensor::full(fill_value.dtype(), dims, fill_value.at(0)))};
  }
  if (count > kMaxImportElements) {
    throw_error(ErrorKind::InvalidArgument, "ConstantOfShape of {} is larger than {} elements",
                dims.to_string(), kMaxImportElements);
  }
  std::vector<DimArg> dim_args(dims.begin(), dims.end());
  return {alloc(constant(Tensor::full(fill_value.dtype(), {}, fill_value.at(0))), dim_args)};
}

Outputs convert_shape(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const int rank = x.rank();
  auto clamp_bound = [rank](std::int64_t bound) {
    if (bound < 0) bound += rank;
    return std::clamp<std::int64_t>(bound, 0, rank);
  };
  const std::int64_t start = clamp_bound(ctx.attribute_int("start", 0));
  const std::int64_t end = clamp_bound(ctx.attribute_int("end", rank));
  if (x.type().is_fully_known()) {
    std::vector<std::int64_t> extents;
    for (std::int64_t axis = start; axis < end; ++axis) extents.push_back(x.type().dims[static_cast<int>(axis)]);
    return {int64_vector(extents)};
  }
  Variable extents = shape(x);
  if (start != 0 || end != rank) extents = subtensor(extents, {slice(start, end)});
  return {extents};
}

Outputs convert_size(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  if (x.type().is_fully_known()) {
    return {constant(Tensor::scalar(static_cast<double>(x.type().dims.product()), DType::Int64))};
  }
  return {prod(shape(x))};
}

/// A target shape known only at run time: its 0 entries copy x's extent on that axis unless
/// allowzero (the reshape itself handles -1).
Variable symbolic_target(const Variable& x, const Variable& target, bool allow_zero) {
  const std::int64_t length = target.type().dims[0];
  if (allow_zero || length == kUnknownDim) return target;
  // x's extents, cut or padded (with zeros nobody may copy) to the target's length.
  Variable extents = shape(x);
  if (length < x.rank()) extents = subtensor(extents, {slice(0, length)});
  if (length > x.rank()) {
    extents = join(0, {extents, constant(Tensor::zeros(DType::Int64, {length - x.rank()}))});
  }
  return switch_(eq(target, 0), extents, target);
}

Outputs convert_reshape(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const bool allow_zero = ctx.attribute_int("allowzero", 0) != 0;
  const std::optional<Tensor> target = ctx.constant_input(1);
  if (!target) return {reshape(x, symbolic_target(x, ctx.input(1), allow_zero))};
  const std::vector<std::int64_t> extents = ctx.constant_ints(1, "shape");
  ShapeBuilder shape_builder;
  for (std::size_t i = 0; i < extents.size(); ++i) {
    if (extents[i] == 0 && !allow_zero) {
      if (static_cast<int>(i) >= x.rank()) {
        throw_error(ErrorKind::ShapeMismatch, "shape entry {} is 0 (copy) but the input has rank {}",
                    i, x.rank());
      }
      shape_builder.add_axis_of(x, static_cast<int>(i));
    } else {
      shape_builder.add(extents[i]);
    }
  }
  return {shape_builder.reshape(x)};
}

Outputs convert_flatten(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  // Flatten's axis lies in [-rank, rank]; a negative one counts from the end like any other.
  std::int64_t axis = ctx.attribute_int("axis", 1);
  if (axis < 0) axis += x.rank();
  if (axis < 0 || axis > x.rank()) {
    throw_error(ErrorKind::IndexOutOfRange, "axis {} is out of range for rank {}",
                ctx.attribute_int("axis", 1), x.rank());
  }
  ShapeBuilder shape_builder;
  shape_builder.add_product_of(x, 0, static_cast<int>(axis));
  shape_builder.add_product_of(x, static_cast<int>(axis), x.rank());
  return {shape_builder.reshape(x)};
}

Outputs convert_transpose(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  std::vector<std::int64_t> reversed;
  for (int axis = x.rank() - 1; axis >= 0; --axis) reversed.push_back(axis);
  std::vector<std::int64_t> perm = ctx.attribute_ints("perm", reversed);
  for (std::int64_t& axis : perm) axis = ctx.axis(axis, x.rank(), "perm entry");
  return {dimshuffle(x, perm)};
}

/// Axes from the attribute (before opset 13) or the optional second input (from 13).
std::vector<std::int64_t> axes_argument(NodeContext& ctx) {
  if (ctx.opset() >= 13) return ctx.has_input(1) ? ctx.constant_ints(1, "axes") : std::vector<std::int64_t>{};
  return ctx.attribute_ints("axes", {});
}

Outputs convert_squeeze(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  std::vector<std::int64_t> axes = axes_argument(ctx);
  if (axes.empty()) {
    for (int axis = 0; axis < x.rank(); ++axis) {
      if (x.type().dims[axis] == kUnknownDim) {
        ctx.unsupported("Squeeze without axes on an input with unknown dims");
      }
      if (x.type().dims[axis] == 1) axes.push_back(axis);
    }
  }
  for (std::int64_t& axis : axes) axis = ctx.axis(axis, x.rank(), "axis");
  ShapeBuilder shape_builder;
  std::vector<std::int64_t> kept;
  for (int axis = 0; axis < x.rank(); ++axis) {
    if (std::find(axes.begin(), axes.end(), axis) != axes.end()) {
      const std::int64_t extent = x.type().dims[axis];
      if (extent != 1 && extent != kUnknownDim) {
        throw_error(ErrorKind::ShapeMismatch, "cannot squeeze axis {} of extent {}", axis, extent);
      }
      continue;
    }
    kept.push_back(axis);
    shape_builder.add_axis_of(x, axis);
  }
  bool statically_ones = true;
  for (std::int64_t axis : axes) statically_ones = statically_ones && x.type().dims[static_cast<int>(axis)] == 1;
  if (statically_ones) return {dimshuffle(x, kept)};
  return {shape_builder.reshape(x)};
}

Outputs convert_unsqueeze(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  std::vector<std::int64_t> axes = axes_argument(ctx);
  const int rank = x.rank() + static_cast<int>(axes.size());
  for (std::int64_t& axis : axes) axis = ctx.axis(axis, rank, "axis");
  std::vector<std::int64_t> pattern;
  std::int64_t next = 0;
  for (int axis = 0; axis < rank; ++axis) {
    const bool inserted = std::find(axes.begin(), axes.end(), axis) != axes.end();
    pattern.push_back(inserted ? kNewAxis : next++);
  }
  if (next != x.rank()) throw_error(ErrorKind::InvalidArgument, "repeated axes in Unsqueeze");
  return {dimshuffle(x, pattern)};
}

Outputs convert_concat(NodeContext& ctx) {
  const std::vector<Variable> inputs = ctx.inputs_from(0);
  const std::int64_t axis =
      ctx.axis(ctx.required_attribute_int("axis"), inputs.front().rank(), "axis");
  if (inputs.size() == 1) return {inputs.front()};
  return {join(axis, inputs)};
}

Outputs convert_split(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const std::int64_t axis = ctx.axis(ctx.attribute_int("axis", 0), x.rank(), "axis");
  std::vector<std::int64_t> sizes;
  if (ctx.opset() >= 13) {
    if (ctx.has_input(1)) sizes = ctx.constant_ints(1, "split");
  } else {
    sizes = ctx.attribute_ints("split", {});
  }
  if (sizes.empty()) {
    const std::int64_t extent = x.type().dims[static_cast<int>(axis)];
    const std::int64_t parts = ctx.num_outputs();
    if (extent == kUnknownDim) ctx.unsupported("an equal Split of an axis of unknown extent");
    if (extent % parts != 0) {
      throw_error(ErrorKind::ShapeMismatch, "axis {} of extent {} does not split into {} equal parts",
                  axis, extent, parts);
    }
    sizes.assign(static_cast<std::size_t>(parts), extent / parts);
  }
  if (sizes.size() == 1) return {x};
  return split(x, axis, sizes);
}

/// Slice bounds to Python's: equal semantics once huge sentinels (INT64_MAX/MIN) are brought
/// within a range that cannot overflow.
std::int64_t tame_bound(std::int64_t value) {
  constexpr std::int64_t kLimit = std::int64_t{1} << 40;
  return std::clamp(value, -kLimit, kLimit);
}

/// Slice bounds from input `index`: constants, or, for a vector computed in the graph (a loop's
/// iteration number), one int64 scalar Variable per entry.
std::vector<IndexBound> slice_bounds(NodeContext& ctx, int index, std::string_view what) {
  std::vector<IndexBound> bounds;
  if (ctx.constant_input(index).has_value()) {
    for (std::int64_t value : ctx.constant_ints(index, what))
      bounds.emplace_back(tame_bound(value));
    return bounds;
  }
  const Variable& values = ctx.input(index);
  if (values.rank() != 1 || values.type().dims[0] == kUnknownDim || !is_integral(values.dtype())) {
    throw_error(ErrorKind::Unsupported,
                "input {} ({}) is {}; a Slice bound computed in the graph must be an integer "
                "vector of static length",
                index, what, values.type().to_string());
  }
  for (std::int64_t i = 0; i < values.type().dims[0]; ++i) {
    bounds.emplace_back(cast(subtensor(values, {i}), DType::Int64));
  }
  return bounds;
}

Outputs convert_slice(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  std::vector<IndexBound> starts;
  std::vector<IndexBound> ends;
  std::vector<std::int64_t> axes;
  std::vector<std::int64_t> steps;
  if (ctx.opset() >= 10) {
    starts = slice_bounds(ctx, 1, "starts");
    ends = slice_bounds(ctx, 2, "ends");
    if (ctx.has_input(3)) axes = ctx.constant_ints(3, "axes");
    if (ctx.has_input(4)) steps = ctx.constant_ints(4, "steps");
  } else {
    for (std::int64_t value : ctx.attribute_ints("starts", {}))
      starts.emplace_back(tame_bound(value));
    for (std::int64_t value : ctx.attribute_ints("ends", {})) ends.emplace_back(tame_bound(value));
    axes = ctx.attribute_ints("axes", {});
  }
  if (starts.size() != ends.size()) {
    throw_error(ErrorKind::InvalidArgument, "{} starts but {} ends", starts.size(), ends.size());
  }
  if (axes.empty()) {
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    throw_error(ErrorKind::InvalidArgument, "starts, ends, axes and steps differ in length");
  }
  IndexList indices(static_cast<std::size_t>(x.rank()), Index(slice()));
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::int64_t axis = ctx.axis(axes[i], x.rank(), "axis");
    if (steps[i] == 0) throw_error(ErrorKind::InvalidArgument, "a Slice step is 0");
    indices[static_cast<std::size_t>(axis)] = slice(starts[i], ends[i], steps[i]);
  }
  return {subtensor(x, indices)};
}

Outputs convert_gather(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const Variable& indices = ctx.input(1);
  const std::int64_t axis = ctx.axis(ctx.attribute_int("axis", 0), x.rank(), "axis");
  IndexList index_list(static_cast<std::size_t>(axis), Index(slice()));
  if (indices.rank() == 0) {
    index_list.emplace_back(indices);
    return {subtensor(x, index_list)};
  }
  if (axis == 0 && indices.rank() == 1) return {advanced_subtensor1(x, indices)};
  index_list.emplace_back(indices);
  return {advanced_subtensor(x, index_list)};
}

Outputs convert_gather_elements(NodeContext& ctx) {
  return {gather_elements(ctx.input(0), ctx.input(1), ctx.attribute_int("axis", 0))};
}

Outputs convert_gather_nd(NodeContext& ctx) {
  return {gather_nd(ctx.input(0), ctx.input(1), ctx.attribute_int("batch_dims", 0))};
}

ScatterReduction scatter_reduction(NodeContext& ctx) {
  const std::string reduction = ctx.attribute_string("reduction", "none");
  if (reduction == "add") return ScatterReduction::Add;
  if (reduction != "none") ctx.unsupported(fmt::format("{} reduction '{}'", ctx.op_type(), reduction));
  return ScatterReduction::None;
}

Outputs convert_scatter_elements(NodeContext& ctx) {
  const ScatterReduction reduction = scatter_reduction(ctx);
  return {scatter_elements(ctx.input(0), ctx.input(1), ctx.input(2), ctx.attribute_int("axis", 0),
                           reduction)};
}

Outputs convert_scatter_nd(NodeContext& ctx) {
  const ScatterReduction reduction = scatter_reduction(ctx);
  return {scatter_nd(ctx.input(0), ctx.input(1), ctx.input(2), reduction)};
}

/// The broadcast of x against `target` extents (NumPy rules, both directions).
Outputs convert_expand(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const std::vector<std::int64_t> target = ctx.constant_ints(1, "shape");
  const int rank = std::max(x.rank(), static_cast<int>(target.size()));
  std::vector<DimArg> dims;
  bool changes = static_cast<int>(target.size()) > x.rank();
  for (int axis = 0; axis < rank; ++axis) {
    const int x_axis = axis - (rank - x.rank());
    const int t_axis = axis - (rank - static_cast<int>(target.size()));
    const std::int64_t wanted = t_axis >= 0 ? target[static_cast<std::size_t>(t_axis)] : 1;
    const std::int64_t have = x_axis >= 0 ? x.type().dims[x_axis] : 1;
    if (wanted == 1 || wanted == have) {
      if (x_axis < 0 || have != kUnknownDim) {
        dims.emplace_back(have);
      } else {
        dims.emplace_back(shape_i(x, x_axis));
      }
      continue;
    }
    if (have != 1 && have != kUnknownDim) {
      throw_error(ErrorKind::ShapeMismatch, "cannot expand extent {} of axis {} to {}", have, axis,
                  wanted);
    }
    dims.emplace_back(wanted);
    changes = true;
  }
  if (!changes) return {x};
  return {alloc(x, dims)};
}

Outputs convert_tile(NodeContext& ctx) {
  Variable x = ctx.input(0);
  const std::vector<std::int64_t> repeats = ctx.constant_ints(1, "repeats");
  if (static_cast<int>(repeats.size()) != x.rank()) {
    throw_error(ErrorKind::ShapeMismatch, "{} repeats for an input of rank {}", repeats.size(),
                x.rank());
  }
  for (int axis = 0; axis < x.rank(); ++axis) {
    const std::int64_t count = repeats[static_cast<std::size_t>(axis)];
    if (count < 0) throw_error(ErrorKind::InvalidArgument, "negative repeat {}", count);
    // Each repeat is one Join input (found by fuzzing: 2^27 repeats exhausted memory at import).
    if (count > kMaxJoinedCopies) {
      ctx.unsupported(fmt::format("Tile with {} repeats of one axis (at most {})", count,
                                  kMaxJoinedCopies));
    }
    if (count == 1) continue;
    if (count == 0) {
      IndexList empty(static_cast<std::size_t>(axis), Index(slice()));
      empty.emplace_back(slice(0, 0));
      x = subtensor(x, empty);
      continue;
    }
    x = join(axis, std::vector<Variable>(static_cast<std::size_t>(count), x));
  }
  return {x};
}

// Constant bounds give a constant, checked against the import limit; any other bound the ARange
// op, whose length is known when the model runs.
Outputs convert_range(NodeContext& ctx) {
  const std::optional<Tensor> start_value = ctx.constant_input(0);
  const std::optional<Tensor> limit_value = ctx.constant_input(1);
  const std::optional<Tensor> delta_value = ctx.constant_input(2);
  if (!start_value || !limit_value || !delta_value) {
    const Variable& start = ctx.input(0);
    return {arange(start, ctx.input(1), ctx.input(2), start.dtype())};
  }
  const Tensor& start = *start_value;
  const Tensor& limit = *limit_value;
  const Tensor& delta = *delta_value;
  const double first = start.at(0);
  const double step = delta.at(0);
  if (step == 0) throw_error(ErrorKind::InvalidArgument, "Range with delta 0");
  const double steps = std::max(0.0, std::ceil((limit.at(0) - first) / step));
  if (!(steps <= static_cast<double>(std::int64_t{1} << 24))) {
    throw_error(ErrorKind::InvalidArgument, "Range of {} elements is larger than {}", steps,
                std::int64_t{1} << 24);
  }
  const auto count = static_cast<std::int64_t>(steps);
  std::vector<double> values;
  for (std::int64_t i = 0; i < count; ++i) values.push_back(first + static_cast<double>(i) * step);
  return {constant(Tensor::from_doubles(start.dtype(), {count}, values))};
}

Outputs convert_nonzero(NodeContext& ctx) { return {nonzero(ctx.input(0))}; }

}  // namespace

void register_shape_converters(ConverterTable& table) {
  table.add("Concat", 4, convert_concat);
  table.add("Constant", 1, convert_constant);
  table.add("ConstantOfShape", 9, convert_constant_of_shape);
  table.add("Expand", 8, convert_expand);
  table.add("Flatten", 1, convert_flatten);
  table.add("Gather", 1, convert_gather);
  table.add("GatherElements", 11, convert_gather_elements);
  table.add("GatherND", 11, convert_gather_nd);
  table.add("NonZero", 9, convert_nonzero);
  table.add("Range", 11, convert_range);
  table.add("Reshape", 5, convert_reshape);
  table.add("Scatter", 9, convert_scatter_elements);
  table.add("ScatterElements", 11, convert_scatter_elements);
  table.add("ScatterND", 11, convert_scatter_nd);
  table.add("Shape", 1, convert_shape);
  table.add("Size", 1, convert_size);
  table.add("Slice", 1, convert_slice);
  table.add("Split", 2, convert_split);
  table.add("Squeeze", 1, convert_squeeze);
  table.add("Tile", 6, convert_tile);
  table.add("Transpose", 1, convert_transpose);
  table.add("Unsqueeze", 1, convert_unsqueeze);
}

}  // namespace tscope::onnx
