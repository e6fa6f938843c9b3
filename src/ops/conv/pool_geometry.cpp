// SPDX-License-Identifier: Apache-2.0
#include "pool_geometry.h"

#include <fmt/format.h>

#include "tscope/core/error.h"
#include "tscope/graph/type.h"

namespace tscope::ops::detail {
namespace {
Dims with_leading(std::int64_t first, std::int64_t second, const Window& window,
                  const Spatial& values) {
  Dims dims{first, second};
  for (int axis = 0; axis < window.spatial_rank; ++axis) {
    dims.push_back(values[static_cast<std::size_t>(axis)]);
  }
  return dims;
}
}  // namespace

Dims PoolGeometry::input_shape() const {
  return with_leading(batch, channels, window, window.input);
}

Dims PoolGeometry::output_shape() const {
  return with_leading(batch, channels, window, window.output);
}

std::string pool_label(std::string_view base, const Attrs& attrs) {
  return fmt::format("{}{}d", base, attrs.get_ints("strides").size());
}

PoolGeometry pool_geometry(const Attrs& attrs, const Dims& x, std::string_view label) {
  const WindowAttrs window_attrs = read_window_attrs(attrs, label);
  const int rank = window_attrs.spatial_rank;
  Spatial kernel{1, 1, 1};
  const std::vector<std::int64_t>& kernel_shape = attrs.get_ints("kernel_shape");
  if (static_cast<int>(kernel_shape.size()) != rank) {
    throw_error(ErrorKind::InvalidArgument, "{}: kernel_shape has {} entries for {} spatial axes",
                label, kernel_shape.size(), rank);
  }
  for (int axis = 0; axis < rank; ++axis) {
    const std::int64_t extent = kernel_shape[static_cast<std::size_t>(axis)];
    if (extent < 1) {
      throw_error(ErrorKind::InvalidArgument, "{}: kernel_shape ({}) must be >= 1", label,
                  fmt::join(kernel_shape, ", "));
    }
    kernel[static_cast<std::size_t>(axis)] = extent;
  }
  if (x.rank() != rank + 2) {
    throw_error(ErrorKind::TypeMismatch, "{}: x {} must have rank {} (N, C, {} spatial axes)",
                label, x.to_string(), rank + 2, rank);
  }
  PoolGeometry geometry;
  geometry.batch = x[0];
  geometry.channels = x[1];
  geometry.window = resolve_window(window_attrs, spatial_of(x), kernel);
  if (!geometry.window.problem.empty()) {
    throw_error(ErrorKind::ShapeMismatch, "{}: x {}: {}", label, x.to_string(),
                geometry.window.problem);
  }
  for (std::size_t axis = 0; axis < static_cast<std::size_t>(rank); ++axis) {
    const Window& w = geometry.window;
    if (w.pad_begin[axis] >= w.kernel[axis] || w.pad_end[axis] >= w.kernel[axis]) {
      throw_error(ErrorKind::InvalidArgument,
                  "{}: pads {} and {} must be smaller than the kernel {}", label,
                  spatial_string(w.pad_begin, rank), spatial_string(w.pad_end, rank),
                  spatial_string(w.kernel, rank));
    }
  }
  return geometry;
}

void check_pool_output_shape(const PoolGeometry& geometry, const Dims& value, const char* what,
                             std::string_view label) {
  const Dims expected = geometry.output_shape();
  bool agrees = value.rank() == expected.rank();
  for (int axis = 0; agrees && axis < value.rank(); ++axis) {
    agrees = value[axis] == kUnknownDim || expected[axis] == kUnknownDim ||
             value[axis] == expected[axis];
  }
  if (!agrees) {
    throw_error(ErrorKind::ShapeMismatch, "{}: {} {} does not match the pooling output {} of x {}",
                label, what, value.to_string(), expected.to_string(),
                geometry.input_shape().to_string());
  }
}

Attrs pool_attrs(const PoolOptions& options, int spatial_rank, bool with_include_pad,
                 std::string_view label) {
  Attrs attrs;
  if (static_cast<int>(options.kernel.size()) != spatial_rank) {
    throw_error(ErrorKind::InvalidArgument, "{}: kernel has {} entries for {} spatial axes", label,
                options.kernel.size(), spatial_rank);
  }
  attrs.set("kernel_shape", options.kernel);
  store_window_attrs(attrs, spatial_rank, options.strides.empty() ? options.kernel : options.strides,
                     options.padding, label);
  if (with_include_pad) attrs.set("include_pad", options.include_pad);
  if (options.ceil_mode) attrs.set("ceil_mode", true);
  return attrs;
}

std::string pool_printed_name(std::string_view base, std::string_view suffix, const Attrs& attrs) {
  std::string text = fmt::format("{}{}{{kernel=({}),{}", pool_label(base, attrs), suffix,
                                 fmt::join(attrs.get_ints("kernel_shape"), ","),
                                 window_attrs_string(attrs));
  if (attrs.has("include_pad")) {
    text += attrs.get_bool("include_pad") ? ",include_pad=True" : ",include_pad=False";
  }
  if (attrs.has("ceil_mode") && attrs.get_bool("ceil_mode")) text += ",ceil_mode=True";
  return text + "}";
}

double pool_flops(const Dims& y, const Attrs& attrs) {
  double kernel_volume = 1;
  for (std::int64_t extent : attrs.get_ints("kernel_shape")) {
    kernel_volume *= static_cast<double>(extent);
  }
  return static_cast<double>(y.product()) * kernel_volume;
}

}  // namespace tscope::ops::detail
