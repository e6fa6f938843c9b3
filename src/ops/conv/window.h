// SPDX-License-Identifier: Apache-2.0
#pragma once
// The sliding-window arithmetic shared by convolution and pooling: reading and checking the
// window attributes, resolving 'same' / 'full' padding against actual extents, and the output
// extent of each spatial axis. Extents may be kUnknownDim at graph-build time; they propagate.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tscope/core/dims.h"
#include "tscope/graph/attrs.h"
#include "tscope/ops/conv.h"

namespace tscope::ops::detail {

inline constexpr int kMaxSpatialRank = 3;
/// One value per spatial axis; entries past spatial_rank are unused.
using Spatial = std::array<std::int64_t, kMaxSpatialRank>;

/// Window attributes as stored on a node (strides, dilations, padding mode and explicit pads).
struct WindowAttrs {
  int spatial_rank = 0;
  Padding::Mode mode = Padding::Mode::Explicit;
  Spatial stride{1, 1, 1};
  Spatial dilation{1, 1, 1};
  Spatial pad_begin{0, 0, 0};
  Spatial pad_end{0, 0, 0};
  /// Pooling's ceil_mode (the optional "ceil_mode" attr): output extents round up and the end
  /// padding grows to fit the last window.
  bool ceil_mode = false;
};

/// Reads the attributes common to conv and pool nodes; throws InvalidArgument naming `label` when
/// a list has the wrong length or a value is out of range (the schema check of the type rule).
[[nodiscard]] WindowAttrs read_window_attrs(const Attrs& attrs, std::string_view label);

/// One resolved window: every extent per spatial axis.
struct Window {
  int spatial_rank = 0;
  Spatial input{};
  Spatial kernel{};
  Spatial stride{};
  Spatial dilation{};
  Spatial pad_begin{};
  Spatial pad_end{};
  Spatial output{};
  /// Set when some axis's dilated kernel exceeds its padded input; names the axis and extents.
  std::string problem;

  [[nodiscard]] std::int64_t output_volume() const;
  [[nodiscard]] std::int64_t kernel_volume() const;
};

/// Resolves padding and output extents; unknown input or kernel extents give unknown outputs.
[[nodiscard]] Window resolve_window(const WindowAttrs& attrs, const Spatial& input,
                                    const Spatial& kernel);

/// The spatial extents of a shape (axes 2..), as Spatial.
[[nodiscard]] Spatial spatial_of(const Dims& shape);

/// "(3, 3)" for the first `rank` entries.
[[nodiscard]] std::string spatial_string(const Spatial& values, int rank);

/// A builder's per-axis list in stored form: `fill` on every axis when empty; throws
/// InvalidArgument when its length is neither 0 nor `rank`.
[[nodiscard]] std::vector<std::int64_t> spatial_list(const std::vector<std::int64_t>& values,
                                                     int rank, std::int64_t fill, const char* name,
                                                     std::string_view label);

/// Writes `strides` and `padding` into `attrs` in their stored form (full-length lists; "valid"
/// is explicit all-zero pads); throws InvalidArgument for lists of the wrong length.
void store_window_attrs(Attrs& attrs, int spatial_rank, const std::vector<std::int64_t>& strides,
                        const Padding& padding, std::string_view label);

/// "stride=(1,1),pad=(0,0)" or "pad=same", the shared part of the printed op names.
[[nodiscard]] std::string window_attrs_string(const Attrs& attrs);

}  // namespace tscope::ops::detail
