// SPDX-License-Identifier: Apache-2.0
// ONNX Resize (opsets 10, 11, 13) and Upsample (7, 9) whose scales or sizes are known at import.
// Each resized axis is one or two gathers with constant indices along that axis (integer-array
// indexing, so gradients are scatter-adds): nearest picks one source row per output row, linear
// blends the two neighbours with constant weights. Axes, modes and the coordinate transformation
// are resolved here once; nothing about the resize is decided at run time.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "../converter.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/indexing.h"

namespace tscope::onnx {
namespace {

using Outputs = std::vector<Variable>;

enum class Interpolation { Nearest, Linear };

struct ResizeSpec {
  Interpolation interpolation = Interpolation::Nearest;
  std::string transformation = "half_pixel";    ///< coordinate_transformation_mode
  std::string rounding = "round_prefer_floor";  ///< nearest_mode
};

/// Where output row `x` of an axis resized from `in` rows by `scale` samples the input. `resized`
/// is the output length the transformation uses: in * scale when scales are given (not rounded,
/// as in ONNX's reference), the requested size otherwise.
double source_coordinate(
    const ResizeSpec& spec, double x, std::int64_t in, double resized, double scale) {
  const std::string& mode = spec.transformation;
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return resized > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") {
    return resized == 1 ? 0.0 : x * static_cast<double>(in - 1) / (resized - 1);
  }
  if (mode == "asymmetric") return x / scale;
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  throw_error(ErrorKind::Internal, "coordinate transformation '{}' was not checked", mode);
}

std::int64_t nearest_row(const ResizeSpec& spec, double coordinate) {
  const std::string& mode = spec.rounding;
  const double below = std::floor(coordinate);
  if (mode == "floor") return static_cast<std::int64_t>(below);
  if (mode == "ceil") return static_cast<std::int64_t>(std::ceil(coordinate));
  const bool tie = coordinate - below == 0.5;
  if (tie) return static_cast<std::int64_t>(mode == "round_prefer_ceil" ? below + 1 : below);
  return static_cast<std::int64_t>(std::round(coordinate));
}

std::int64_t clamp_row(std::int64_t row, std::int64_t in) {
  return std::clamp<std::int64_t>(row, 0, in - 1);
}

IndexList along(int axis, const Variable& rows) {
  IndexList list(static_cast<std::size_t>(axis), Index(slice()));
  list.emplace_back(rows);
  return list;
}

Variable rows_constant(const std::vector<std::int64_t>& rows) {
  return constant(
      Tensor::from_vector<std::int64_t>({static_cast<std::int64_t>(rows.size())}, rows));
}

/// x resized along `axis` from `in` to `out` rows; x itself when every output row is its own
/// source.
Variable resize_axis(const ResizeSpec& spec,
                     const Variable& x,
                     int axis,
                     std::int64_t in,
                     std::int64_t out,
                     double resized,
                     double scale) {
  std::vector<std::int64_t> first(static_cast<std::size_t>(out));
  std::vector<std::int64_t> second(static_cast<std::size_t>(out));
  std::vector<double> second_weight(static_cast<std::size_t>(out), 0.0);
  bool identity = in == out;
  for (std::int64_t i = 0; i < out; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const double coordinate = source_coordinate(spec, static_cast<double>(i), in, resized, scale);
    if (spec.interpolation == Interpolation::Nearest) {
      first[k] = clamp_row(nearest_row(spec, coordinate), in);
    } else {
      // Neighbours outside the input repeat its edge rows (ONNX's reference pads with edges).
      const double below = std::floor(coordinate);
      first[k] = clamp_row(static_cast<std::int64_t>(below), in);
      second[k] = clamp_row(static_cast<std::int64_t>(below) + 1, in);
      second_weight[k] = first[k] == second[k] ? 0.0 : coordinate - below;
    }
    identity = identity && first[k] == i && second_weight[k] == 0.0;
  }
  if (identity) return x;
  const Variable near = advanced_subtensor(x, along(axis, rows_constant(first)));
  if (spec.interpolation == Interpolation::Nearest) return near;
  const Variable far = advanced_subtensor(x, along(axis, rows_constant(second)));
  Dims weight_dims = Dims::filled(x.rank() - axis, 1);
  weight_dims[0] = out;
  std::vector<double> near_weight(second_weight.size());
  for (std::size_t k = 0; k < second_weight.size(); ++k) near_weight[k] = 1.0 - second_weight[k];
  const Variable w_near = constant(Tensor::from_doubles(x.dtype(), weight_dims, near_weight));
  const Variable w_far = constant(Tensor::from_doubles(x.dtype(), weight_dims, second_weight));
  return near * w_near + far * w_far;
}

/// Resizes every axis of x by `scales` (or to `sizes` when not empty).
Variable resize(NodeContext& ctx,
                const ResizeSpec& spec,
                const Variable& x,
                const std::vector<double>& scales,
                const std::vector<std::int64_t>& sizes) {
  const int rank = x.rank();
  const std::size_t given = sizes.empty() ? scales.size() : sizes.size();
  if (static_cast<int>(given) != rank) {
    throw_error(ErrorKind::InvalidArgument, "{} {} for an input of rank {}", given,
                sizes.empty() ? "scales" : "sizes", rank);
  }
  if (spec.interpolation == Interpolation::Linear && !is_floating(x.dtype())) {
    ctx.unsupported(fmt::format("linear Resize of {} data", dtype_name(x.dtype())));
  }
  Variable y = x;
  for (int axis = 0; axis < rank; ++axis) {
    const auto k = static_cast<std::size_t>(axis);
    const std::int64_t in = x.type().dims[axis];
    if (sizes.empty() ? !(scales[k] > 0) : sizes[k] < 0) {  // NaN scales too
      throw_error(ErrorKind::InvalidArgument, "Resize {} {} on axis {}",
                  sizes.empty() ? "scale" : "size",
                  sizes.empty() ? scales[k] : static_cast<double>(sizes[k]), axis);
    }
    if (in == kUnknownDim) {
      if (sizes.empty() && scales[k] == 1.0) continue;  // any extent maps onto itself
      ctx.unsupported(fmt::format("Resize of axis {}, whose extent is unknown at import", axis));
    }
    // Bounded before converting: a huge or infinite scale must not overflow the cast.
    constexpr double kMaxRows = static_cast<double>(std::int64_t{1} << 24);
    const double rows = sizes.empty() ? std::floor(static_cast<double>(in) * scales[k])
                                      : static_cast<double>(sizes[k]);
    if (!(rows <= kMaxRows)) {
      throw_error(ErrorKind::InvalidArgument, "Resize of axis {} to {} rows (at most 2^24)", axis,
                  rows);
    }
    const auto out = static_cast<std::int64_t>(rows);
    if (in == 0 || out == 0) ctx.unsupported("Resize to or from an empty axis");
    const double scale =
        sizes.empty() ? scales[k] : static_cast<double>(out) / static_cast<double>(in);
    const double resized =
        sizes.empty() ? static_cast<double>(in) * scales[k] : static_cast<double>(out);
    y = resize_axis(spec, y, axis, in, out, resized, scale);
  }
  return y;
}

Interpolation interpolation_of(NodeContext& ctx) {
  const std::string mode = ctx.attribute_string("mode", "nearest");
  if (mode == "nearest") return Interpolation::Nearest;
  if (mode == "linear") return Interpolation::Linear;
  ctx.unsupported(fmt::format("Resize mode '{}'", mode));
}

std::vector<double> float_values(const Tensor& tensor) { return tensor.to_doubles(); }

/// Opsets 10 and Upsample: asymmetric coordinates, nearest rows rounded down.
ResizeSpec legacy_spec(NodeContext& ctx) {
  ResizeSpec spec;
  spec.interpolation = interpolation_of(ctx);
  spec.transformation = "asymmetric";
  spec.rounding = "floor";
  return spec;
}

Outputs convert_resize_10(NodeContext& ctx) {
  const ResizeSpec spec = legacy_spec(ctx);
  return {
      resize(ctx, spec, ctx.input(0), float_values(ctx.required_constant_input(1, "scales")), {})};
}

Outputs convert_upsample_7(NodeContext& ctx) {
  const ResizeSpec spec = legacy_spec(ctx);
  return {resize(ctx, spec, ctx.input(0), ctx.attribute_floats("scales"), {})};
}

/// Opsets 11 and 13: X, roi, scales, sizes (roi and scales optional from 13).
Outputs convert_resize_11(NodeContext& ctx) {
  ResizeSpec spec;
  spec.interpolation = interpolation_of(ctx);
  spec.transformation = ctx.attribute_string("coordinate_transformation_mode", "half_pixel");
  spec.rounding = ctx.attribute_string("nearest_mode", "round_prefer_floor");
  (void)ctx.attribute_float("cubic_coeff_a", -0.75);      // cubic only
  (void)ctx.attribute_float("extrapolation_value", 0.0);  // tf_crop_and_resize only
  if (ctx.attribute_int("exclude_outside", 0) != 0) ctx.unsupported("Resize exclude_outside=1");
  constexpr std::array<std::string_view, 5> kTransformations{
      "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"};
  if (std::find(kTransformations.begin(), kTransformations.end(), spec.transformation) ==
      kTransformations.end()) {
    ctx.unsupported(fmt::format("Resize coordinate_transformation_mode '{}'", spec.transformation));
  }
  constexpr std::array<std::string_view, 4> kRoundings{"round_prefer_floor", "round_prefer_ceil",
                                                       "floor", "ceil"};
  if (std::find(kRoundings.begin(), kRoundings.end(), spec.rounding) == kRoundings.end()) {
    ctx.unsupported(fmt::format("Resize nearest_mode '{}'", spec.rounding));
  }
  std::vector<double> scales;
  std::vector<std::int64_t> sizes;
  if (ctx.has_input(2)) scales = float_values(ctx.required_constant_input(2, "scales"));
  if (ctx.has_input(3)) sizes = ctx.constant_ints(3, "sizes");
  if (scales.empty() == sizes.empty()) {
    throw_error(ErrorKind::InvalidArgument, "Resize needs exactly one of scales and sizes");
  }
  return {resize(ctx, spec, ctx.input(0), scales, sizes)};
}

}  // namespace

void register_resize_converters(ConverterTable& table) {
  table.add("Resize", 10, convert_resize_10);
  table.add("Resize", 11, convert_resize_11);
  table.add("Upsample", 7, convert_upsample_7);
  table.add("Upsample", 9, convert_resize_10);
}

}  // namespace tscope::onnx
