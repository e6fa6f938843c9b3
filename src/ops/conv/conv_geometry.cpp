// SPDX-License-Identifier: Apache-2.0
#include "conv_geometry.h"

#include <fmt/format.h>

#include "../shape/shape_values.h"
#include "tscope/core/error.h"
#include "tscope/graph/type.h"
#include "tscope/ops/shape.h"

namespace tscope::ops::detail {
namespace {
bool known(std::int64_t extent) { return extent != kUnknownDim; }

Dims spatial_dims(const Window& window, const Spatial& values) {
  Dims dims;
  for (int axis = 0; axis < window.spatial_rank; ++axis) {
    dims.push_back(values[static_cast<std::size_t>(axis)]);
  }
  return dims;
}

Dims with_leading(std::int64_t first, std::int64_t second, const Dims& spatial) {
  Dims dims{first, second};
  for (std::int64_t extent : spatial) dims.push_back(extent);
  return dims;
}
}  // namespace

Dims ConvGeometry::input_shape() const {
  return with_leading(batch, in_channels, spatial_dims(window, window.input));
}

Dims ConvGeometry::weight_shape() const {
  const std::int64_t per_group = known(in_channels) ? in_channels / groups : kUnknownDim;
  return with_leading(out_channels, per_group, spatial_dims(window, window.kernel));
}

Dims ConvGeometry::output_shape() const {
  return with_leading(batch, out_channels, spatial_dims(window, window.output));
}

std::string conv_label(const Attrs& attrs) {
  return fmt::format("Conv{}d", attrs.get_ints("strides").size());
}

ConvGeometry conv_geometry(const Attrs& attrs, const Dims& x, const Dims& w,
                           std::string_view label) {
  const WindowAttrs window_attrs = read_window_attrs(attrs, label);
  ConvGeometry geometry;
  geometry.groups = attrs.get_int("groups");
  if (geometry.groups < 1) {
    throw_error(ErrorKind::InvalidArgument, "{}: groups must be >= 1; got {}", label,
                geometry.groups);
  }
  const int rank = window_attrs.spatial_rank + 2;
  if (x.rank() != rank || w.rank() != rank) {
    throw_error(ErrorKind::TypeMismatch,
                "{}: x {} and w {} must both have rank {} (N, C, {} spatial axes)", label,
                x.to_string(), w.to_string(), rank, window_attrs.spatial_rank);
  }
  geometry.batch = x[0];
  geometry.in_channels = x[1];
  geometry.out_channels = w[0];
  const std::int64_t groups = geometry.groups;
  if (known(x[1]) && x[1] % groups != 0) {
    throw_error(ErrorKind::ShapeMismatch, "{}: groups={} does not divide the {} input channels of x {}",
                label, groups, x[1], x.to_string());
  }
  if (known(w[0]) && w[0] % groups != 0) {
    throw_error(ErrorKind::ShapeMismatch,
                "{}: groups={} does not divide the {} output channels of w {}", label, groups, w[0],
                w.to_string());
  }
  if (known(x[1]) && known(w[1]) && x[1] != w[1] * groups) {
    throw_error(ErrorKind::ShapeMismatch,
                "{}: x {} has {} input channels but w {} expects {} ({} per group x groups={})",
                label, x.to_string(), x[1], w.to_string(), w[1] * groups, w[1], groups);
  }
  if (!known(x[1]) && known(w[1])) geometry.in_channels = w[1] * groups;
  geometry.window = resolve_window(window_attrs, spatial_of(x), spatial_of(w));
  if (!geometry.window.problem.empty()) {
    throw_error(ErrorKind::ShapeMismatch, "{}: x {} and w {}: {}", label, x.to_string(),
                w.to_string(), geometry.window.problem);
  }
  return geometry;
}

void check_conv_output_grad(const ConvGeometry& geometry, const Dims& dy, std::string_view label) {
  const Dims expected = geometry.output_shape();
  bool agrees = dy.rank() == expected.rank();
  for (int axis = 0; agrees && axis < dy.rank(); ++axis) {
    agrees = !known(dy[axis]) || !known(expected[axis]) || dy[axis] == expected[axis];
  }
  if (!agrees) {
    throw_error(ErrorKind::ShapeMismatch,
                "{}: dy {} does not match the convolution output {} of x {} and w {}", label,
                dy.to_string(), expected.to_string(), geometry.input_shape().to_string(),
                geometry.weight_shape().to_string());
  }
}

void check_conv_float_inputs(const InferContext& ctx, std::initializer_list<int> indices,
                             std::string_view label) {
  const DType dtype = ctx.input_type(*indices.begin()).dtype;
  for (int index : indices) {
    const Type& type = ctx.input_type(index);
    if ((type.dtype != DType::Float32 && type.dtype != DType::Float64) || type.dtype != dtype) {
      std::vector<std::string> types;
      for (int i : indices) types.push_back(ctx.input_type(i).to_string());
      throw_error(ErrorKind::TypeMismatch, "{}: inputs must share one float dtype; got {}", label,
                  fmt::join(types, ", "));
    }
  }
}

Dims static_shape_input(const Variable& shape, int rank, std::string_view label) {
  require_integer(shape, 1, fmt::format("{}: the shape input", label));
  Dims dims = Dims::filled(rank, kUnknownDim);
  const auto entries = static_vector(shape);
  if (!entries) return dims;
  if (static_cast<int>(entries->size()) != rank) {
    throw_error(ErrorKind::TypeMismatch, "{}: the shape input has {} entries; expected {}", label,
                entries->size(), rank);
  }
  for (int axis = 0; axis < rank; ++axis) {
    const auto& entry = (*entries)[static_cast<std::size_t>(axis)];
    if (entry) dims[axis] = *entry;
  }
  return dims;
}

Dims shape_from_tensor(const Tensor& shape, int rank, std::string_view label) {
  if (shape.rank() != 1 || shape.numel() != rank) {
    throw_error(ErrorKind::ShapeMismatch, "{}: the shape input has shape {}; expected ({})", label,
                shape.shape().to_string(), rank);
  }
  Dims dims;
  for (int axis = 0; axis < rank; ++axis) {
    const auto extent = static_cast<std::int64_t>(shape.at(axis));
    if (extent < 0) {
      throw_error(ErrorKind::ShapeMismatch, "{}: the shape input {} has a negative extent", label,
                  shape.to_string());
    }
    dims.push_back(extent);
  }
  return dims;
}

Variable shape_variable(const Variable& x) {
  const Type& type = x.type();
  if (!type.is_fully_known()) return shape(x);
  const std::vector<std::int64_t> dims(type.dims.begin(), type.dims.end());
  return make_constant(Tensor::from_vector<std::int64_t>({type.rank()}, dims), "",
                       std::source_location::current());
}

double conv_flops(const Dims& dy, const Dims& w) {
  double kernel_volume = 1;
  for (int axis = 2; axis < w.rank(); ++axis) kernel_volume *= static_cast<double>(w[axis]);
  return 2.0 * static_cast<double>(dy.product()) * static_cast<double>(w[1]) * kernel_volume;
}

}  // namespace tscope::ops::detail
