// SPDX-License-Identifier: Apache-2.0
// ONNX ops that rearrange or synthesise data from shape arithmetic: Pad, DepthToSpace,
// SpaceToDepth, Trilu, EyeLike, OneHot.
#include <fmt/format.h>

#include "../converter.h"
#include "../reader.h"
#include "shape_builder.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/shape.h"

namespace tscope::onnx {
namespace {

using Outputs = std::vector<Variable>;

IndexList along(int axis, const Slice& range) {
  IndexList indices(static_cast<std::size_t>(axis), Index(slice()));
  indices.emplace_back(range);
  return indices;
}

std::int64_t static_extent(NodeContext& ctx, const Variable& x, int axis, std::string_view what) {
  const std::int64_t extent = x.type().dims[axis];
  if (extent == kUnknownDim) ctx.unsupported(fmt::format("{} on an axis of unknown extent", what));
  return extent;
}

/// x with `count` copies of the fill value (constant mode) or of its edge / mirrored rows placed
/// before (`before`) or after axis `axis`.
Variable pad_block(NodeContext& ctx, const Variable& x, int axis, std::int64_t count, bool before,
                   const std::string& mode, const Variable& fill) {
  if (mode == "constant") {
    std::vector<DimArg> dims;
    for (int i = 0; i < x.rank(); ++i) {
      if (i == axis) {
        dims.emplace_back(count);
      } else if (x.type().dims[i] != kUnknownDim) {
        dims.emplace_back(x.type().dims[i]);
      } else {
        dims.emplace_back(shape_i(x, i));
      }
    }
    return alloc(fill, dims);
  }
  const std::int64_t extent = static_extent(ctx, x, axis, "edge or reflect Pad");
  if (count > (std::int64_t{1} << 12)) {
    ctx.unsupported(fmt::format("{} Pad of {} rows (at most 4096)", mode, count));
  }
  if (mode == "edge") {
    const Variable edge = subtensor(x, along(axis, before ? slice(0, 1) : slice(extent - 1, extent)));
    return join(axis, std::vector<Variable>(static_cast<std::size_t>(count), edge));
  }
  if (mode != "reflect") ctx.unsupported(fmt::format("Pad mode '{}'", mode));
  if (count >= extent) {
    throw_error(ErrorKind::ShapeMismatch, "reflect Pad of {} on an axis of extent {}", count, extent);
  }
  // Mirror without repeating the edge: rows count..1 before, extent-2..extent-1-count after.
  if (before) return subtensor(x, along(axis, slice(count, 0, -1)));
  // A negative stop would count from the end; running down to row 0 is an omitted stop.
  const std::int64_t stop = extent - 2 - count;
  return subtensor(x, along(axis, slice(extent - 2, stop >= 0 ? IndexBound(stop) : IndexBound(none), -1)));
}

Outputs convert_pad(NodeContext& ctx) {
  Variable x = ctx.input(0);
  const std::string mode = ctx.attribute_string("mode", "constant");
  std::vector<std::int64_t> pads;
  Variable fill;
  if (ctx.opset() >= 11) {
    pads = ctx.constant_ints(1, "pads");
    fill = ctx.has_input(2) ? ctx.input(2) : constant(Tensor::scalar(0.0, x.dtype()));
  } else {
    pads = ctx.attribute_ints("pads", {});
    fill = constant(Tensor::scalar(ctx.attribute_float("value", 0.0), x.dtype()));
  }
  const int rank = x.rank();
  if (static_cast<int>(pads.size()) != 2 * rank) {
    throw_error(ErrorKind::InvalidArgument, "pads has {} entries; rank {} needs {}", pads.size(),
                rank, 2 * rank);
  }
  if (fill.dtype() != x.dtype()) fill = cast(fill, x.dtype());
  for (int axis = 0; axis < rank; ++axis) {
    std::int64_t begin = pads[static_cast<std::size_t>(axis)];
    std::int64_t end = pads[static_cast<std::size_t>(axis + rank)];
    // Negative pads crop.
    if (begin < 0 || end < 0) {
      x = subtensor(x, along(axis, slice(begin < 0 ? -begin : 0, end < 0 ? IndexBound(end) : IndexBound(none))));
      begin = std::max<std::int64_t>(begin, 0);
      end = std::max<std::int64_t>(end, 0);
    }
    if (begin == 0 && end == 0) continue;
    std::vector<Variable> parts;
    if (begin > 0) parts.push_back(pad_block(ctx, x, axis, begin, true, mode, fill));
    parts.push_back(x);
    if (end > 0) parts.push_back(pad_block(ctx, x, axis, end, false, mode, fill));
    x = join(axis, parts);
  }
  return {x};
}

/// (N, C, H, W) rearrangements between depth and space; N may be symbolic.
Outputs convert_depth_to_space(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  if (x.rank() != 4) ctx.unsupported("DepthToSpace of a non 4-D input");
  const std::int64_t block = ctx.required_attribute_int("blocksize");
  if (block < 1) throw_error(ErrorKind::InvalidArgument, "blocksize {} must be >= 1", block);
  const std::string mode = ctx.attribute_string("mode", "DCR");
  const std::int64_t channels = static_extent(ctx, x, 1, "DepthToSpace");
  const std::int64_t height = static_extent(ctx, x, 2, "DepthToSpace");
  const std::int64_t width = static_extent(ctx, x, 3, "DepthToSpace");
  if (channels % (block * block) != 0) {
    throw_error(ErrorKind::ShapeMismatch, "{} channels do not divide into blocks of {}x{}",
                channels, block, block);
  }
  const std::int64_t depth = channels / (block * block);
  ShapeBuilder split_shape;
  split_shape.add_axis_of(x, 0);
  std::vector<std::int64_t> order;
  if (mode == "DCR") {
    for (std::int64_t extent : {block, block, depth, height, width}) split_shape.add(extent);
    order = {0, 3, 4, 1, 5, 2};
  } else if (mode == "CRD") {
    for (std::int64_t extent : {depth, block, block, height, width}) split_shape.add(extent);
    order = {0, 1, 4, 2, 5, 3};
  } else {
    ctx.unsupported(fmt::format("DepthToSpace mode '{}'", mode));
  }
  ShapeBuilder result;
  result.add_axis_of(x, 0);
  for (std::int64_t extent : {depth, height * block, width * block}) result.add(extent);
  return {result.reshape(dimshuffle(split_shape.reshape(x), order))};
}

Outputs convert_space_to_depth(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  if (x.rank() != 4) ctx.unsupported("SpaceToDepth of a non 4-D input");
  const std::int64_t block = ctx.required_attribute_int("blocksize");
  if (block < 1) throw_error(ErrorKind::InvalidArgument, "blocksize {} must be >= 1", block);
  const std::int64_t channels = static_extent(ctx, x, 1, "SpaceToDepth");
  const std::int64_t height = static_extent(ctx, x, 2, "SpaceToDepth");
  const std::int64_t width = static_extent(ctx, x, 3, "SpaceToDepth");
  if (height % block != 0 || width % block != 0) {
    throw_error(ErrorKind::ShapeMismatch, "{}x{} does not divide into blocks of {}", height, width,
                block);
  }
  ShapeBuilder split_shape;
  split_shape.add_axis_of(x, 0);
  for (std::int64_t extent : {channels, height / block, block, width / block, block}) split_shape.add(extent);
  ShapeBuilder result;
  result.add_axis_of(x, 0);
  for (std::int64_t extent : {channels * block * block, height / block, width / block}) result.add(extent);
  return {result.reshape(dimshuffle(split_shape.reshape(x), {0, 3, 5, 1, 2, 4}))};
}

Outputs convert_trilu(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  if (x.rank() < 2) throw_error(ErrorKind::ShapeMismatch, "Trilu needs rank >= 2, got {}", x.rank());
  const bool upper = ctx.attribute_int("upper", 1) != 0;
  const std::int64_t k = ctx.has_input(1) ? ctx.constant_ints(1, "k").at(0) : 0;
  const std::int64_t rows = static_extent(ctx, x, x.rank() - 2, "Trilu");
  const std::int64_t columns = static_extent(ctx, x, x.rank() - 1, "Trilu");
  Tensor keep = Tensor::zeros(DType::Bool, {rows, columns});
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < columns; ++j) {
      keep.data<bool>()[i * columns + j] = upper ? j - i >= k : j - i <= k;
    }
  }
  return {switch_(constant(keep), x, constant(Tensor::scalar(0.0, x.dtype())))};
}

Outputs convert_eye_like(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  if (x.rank() != 2) throw_error(ErrorKind::ShapeMismatch, "EyeLike needs a 2-D input");
  const DType dtype = ctx.has_attribute("dtype")
                          ? dtype_from_onnx(static_cast<int>(ctx.attribute_int("dtype", 1)), "dtype")
                          : x.dtype();
  const std::int64_t k = ctx.attribute_int("k", 0);
  const std::int64_t rows = static_extent(ctx, x, 0, "EyeLike");
  const std::int64_t columns = static_extent(ctx, x, 1, "EyeLike");
  std::vector<double> values(static_cast<std::size_t>(rows * columns), 0.0);
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t j = i + k;
    if (j >= 0 && j < columns) values[static_cast<std::size_t>(i * columns + j)] = 1.0;
  }
  return {constant(Tensor::from_doubles(dtype, {rows, columns}, values))};
}

Outputs convert_one_hot(NodeContext& ctx) {
  const Variable& indices = ctx.input(0);
  const Tensor depth_value = ctx.required_constant_input(1, "depth");
  const auto depth = static_cast<std::int64_t>(depth_value.at(0));
  const Variable& values = ctx.input(2);  // [off, on]
  const int rank = indices.rank() + 1;
  const std::int64_t axis = ctx.axis(ctx.attribute_int("axis", -1), rank, "axis");
  std::vector<double> classes;
  for (std::int64_t c = 0; c < depth; ++c) classes.push_back(static_cast<double>(c));
  Dims class_shape = Dims::filled(rank, 1);
  class_shape[static_cast<int>(axis)] = depth;
  const Variable class_index = constant(Tensor::from_doubles(DType::Int64, class_shape, classes));
  Variable index = is_floating(indices.dtype()) ? cast(floor(indices), DType::Int64) : cast(indices, DType::Int64);
  index = switch_(lt(index, 0.0), index + static_cast<double>(depth), index);  // negative: from the end
  std::vector<std::int64_t> pattern;
  for (std::int64_t i = 0, next = 0; i < rank; ++i) pattern.push_back(i == axis ? kNewAxis : next++);
  const Variable hot = eq(dimshuffle(index, pattern), class_index);
  const Variable off = subtensor(values, {0});
  const Variable on = subtensor(values, {1});
  return {switch_(hot, on, off)};
}

}  // namespace

void register_layout_converters(ConverterTable& table) {
  table.add("DepthToSpace", 1, convert_depth_to_space);
  table.add("EyeLike", 9, convert_eye_like);
  table.add("OneHot", 9, convert_one_hot);
  table.add("Pad", 2, convert_pad);
  table.add("SpaceToDepth", 1, convert_space_to_depth);
  table.add("Trilu", 14, convert_trilu);
}

}  // namespace tscope::onnx
