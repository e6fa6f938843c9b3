// SPDX-License-Identifier: Apache-2.0
#include "window.h"

#include <fmt/format.h>

#include <algorithm>

#include "tscope/core/checked_math.h"
#include "tscope/core/error.h"
#include "tscope/graph/type.h"

namespace tscope::ops::detail {
namespace {
std::string_view mode_name(Padding::Mode mode) {
  switch (mode) {
    case Padding::Mode::Same: return "same";
    case Padding::Mode::Full: return "full";
    case Padding::Mode::Explicit: break;
  }
  return "explicit";
}

Padding::Mode parse_mode(const std::string& name, std::string_view label) {
  if (name == "explicit") return Padding::Mode::Explicit;
  if (name == "same") return Padding::Mode::Same;
  if (name == "full") return Padding::Mode::Full;
  throw_error(ErrorKind::InvalidArgument,
              "{}: padding '{}' is none of 'explicit', 'same', 'full'", label, name);
}

// Copies a stored list into `out`, checking its length and lower bound.
void read_list(const Attrs& attrs, const char* name, int rank, std::int64_t minimum,
               std::string_view label, Spatial& out) {
  const std::vector<std::int64_t>& values = attrs.get_ints(name);
  if (static_cast<int>(values.size()) != rank) {
    throw_error(ErrorKind::InvalidArgument, "{}: {} has {} entries for {} spatial axes", label,
                name, values.size(), rank);
  }
  for (int axis = 0; axis < rank; ++axis) {
    if (values[static_cast<std::size_t>(axis)] < minimum) {
      throw_error(ErrorKind::InvalidArgument, "{}: {} ({}) must be >= {}", label, name,
                  fmt::join(values, ", "), minimum);
    }
    out[static_cast<std::size_t>(axis)] = values[static_cast<std::size_t>(axis)];
  }
}

std::string tuple_string(const std::vector<std::int64_t>& values) {
  return fmt::format("({})", fmt::join(values, ","));
}
}  // namespace

std::vector<std::int64_t> spatial_list(const std::vector<std::int64_t>& values, int rank,
                                       std::int64_t fill, const char* name,
                                       std::string_view label) {
  if (values.empty()) return std::vector<std::int64_t>(static_cast<std::size_t>(rank), fill);
  if (static_cast<int>(values.size()) != rank) {
    throw_error(ErrorKind::InvalidArgument, "{}: {} has {} entries for {} spatial axes", label,
                name, values.size(), rank);
  }
  return values;
}

WindowAttrs read_window_attrs(const Attrs& attrs, std::string_view label) {
  WindowAttrs result;
  const auto rank = static_cast<int>(attrs.get_ints("strides").size());
  if (rank < 1 || rank > kMaxSpatialRank) {
    throw_error(ErrorKind::InvalidArgument, "{}: {} spatial axes; 1 to {} are supported", label,
                rank, kMaxSpatialRank);
  }
  result.spatial_rank = rank;
  result.mode = parse_mode(attrs.get_string("padding"), label);
  read_list(attrs, "strides", rank, 1, label, result.stride);
  if (attrs.has("dilations")) read_list(attrs, "dilations", rank, 1, label, result.dilation);
  read_list(attrs, "pads_begin", rank, 0, label, result.pad_begin);
  read_list(attrs, "pads_end", rank, 0, label, result.pad_end);
  result.ceil_mode = attrs.has("ceil_mode") && attrs.get_bool("ceil_mode");
  return result;
}

std::int64_t Window::output_volume() const {
  std::int64_t volume = 1;
  for (int axis = 0; axis < spatial_rank; ++axis) volume *= output[static_cast<std::size_t>(axis)];
  return volume;
}

std::int64_t Window::kernel_volume() const {
  std::int64_t volume = 1;
  for (int axis = 0; axis < spatial_rank; ++axis) volume *= kernel[static_cast<std::size_t>(axis)];
  return volume;
}

Window resolve_window(const WindowAttrs& attrs, const Spatial& input, const Spatial& kernel) {
  Window window;
  window.spatial_rank = attrs.spatial_rank;
  window.input = input;
  window.kernel = kernel;
  window.stride = attrs.stride;
  window.dilation = attrs.dilation;
  for (std::size_t axis = 0; axis < static_cast<std::size_t>(attrs.spatial_rank); ++axis) {
    const std::int64_t in = input[axis];
    const std::int64_t k = kernel[axis];
    const std::int64_t s = attrs.stride[axis];
    // Checked: kernel, dilation, stride and pads come from model attributes.
    constexpr std::string_view kWhat = "convolution window";
    const std::int64_t extent =
        k == kUnknownDim ? kUnknownDim
                         : checked_add(checked_mul(k - 1, attrs.dilation[axis], kWhat), 1, kWhat);
    std::int64_t& begin = window.pad_begin[axis];
    std::int64_t& end = window.pad_end[axis];
    std::int64_t& out = window.output[axis];
    begin = attrs.pad_begin[axis];
    end = attrs.pad_end[axis];
    out = kUnknownDim;
    if (attrs.mode == Padding::Mode::Full) {
      begin = end = extent == kUnknownDim ? kUnknownDim : extent - 1;
    } else if (attrs.mode == Padding::Mode::Same) {
      // TensorFlow's / ONNX SAME_UPPER rule: the output keeps ceil(in / stride) positions.
      if (in != kUnknownDim) out = checked_add(in, s - 1, kWhat) / s;
      if (in == kUnknownDim || extent == kUnknownDim) {
        begin = end = kUnknownDim;
        continue;
      }
      const std::int64_t total =
          std::max<std::int64_t>(checked_add((out - 1) * s, extent, kWhat) - in, 0);
      begin = total / 2;
      end = total - begin;
    }
    if (in == kUnknownDim || extent == kUnknownDim) continue;
    const std::int64_t padded = checked_add(checked_add(in, begin, kWhat), end, kWhat);
    if (attrs.ceil_mode) {
      // Every window starts inside the input or its begin padding, so a partial last window (or
      // one window over an input smaller than the kernel) is kept. The end padding becomes what
      // the last window needs (none when it ends inside the input), so the usual floor formula
      // over the resolved pads gives the same extent and kernels need no ceil case.
      const std::int64_t span = std::max<std::int64_t>(padded - extent, 0);
      out = checked_add(span, s - 1, kWhat) / s + 1;
      if ((out - 1) * s >= in + begin) --out;
      if (out > 0) end = std::max<std::int64_t>((out - 1) * s + extent - in - begin, 0);
      continue;
    }
    if (padded < extent) {
      if (window.problem.empty()) {
        window.problem = fmt::format(
            "spatial axis {}: the kernel extent {} (kernel {}, dilation {}) is bigger than the "
            "padded input {} (input {} + pads {} and {})",
            axis, extent, k, attrs.dilation[axis], padded, in, begin, end);
      }
      out = 0;
      continue;
    }
    out = (padded - extent) / s + 1;
  }
  return window;
}

Spatial spatial_of(const Dims& shape) {
  Spatial result{1, 1, 1};
  for (int axis = 2; axis < shape.rank() && axis - 2 < kMaxSpatialRank; ++axis) {
    result[static_cast<std::size_t>(axis - 2)] = shape[axis];
  }
  return result;
}

std::string spatial_string(const Spatial& values, int rank) {
  std::vector<std::int64_t> list(values.begin(), values.begin() + rank);
  return fmt::format("({})", fmt::join(list, ", "));
}

void store_window_attrs(Attrs& attrs, int spatial_rank, const std::vector<std::int64_t>& strides,
                        const Padding& padding, std::string_view label) {
  attrs.set("strides", spatial_list(strides, spatial_rank, 1, "strides", label));
  attrs.set("padding", std::string(mode_name(padding.mode)));
  const bool is_explicit = padding.mode == Padding::Mode::Explicit;
  if (!is_explicit && (!padding.begin.empty() || !padding.end.empty())) {
    throw_error(ErrorKind::InvalidArgument, "{}: padding '{}' takes no explicit pads", label,
                mode_name(padding.mode));
  }
  attrs.set("pads_begin", spatial_list(padding.begin, spatial_rank, 0, "pads_begin", label));
  attrs.set("pads_end", spatial_list(padding.end, spatial_rank, 0, "pads_end", label));
}

std::string window_attrs_string(const Attrs& attrs) {
  std::string text = "stride=" + tuple_string(attrs.get_ints("strides"));
  const std::string& mode = attrs.get_string("padding");
  if (mode != "explicit") return text + ",pad=" + mode;
  const std::vector<std::int64_t>& begin = attrs.get_ints("pads_begin");
  const std::vector<std::int64_t>& end = attrs.get_ints("pads_end");
  if (begin == end) return text + ",pad=" + tuple_string(begin);
  return text + ",pad_begin=" + tuple_string(begin) + ",pad_end=" + tuple_string(end);
}

}  // namespace tscope::ops::detail
