// SPDX-License-Identifier: Apache-2.0
// The shapes of one pooling: x (N, C, spatial...) and y (N, C, out...), checked and resolved once
// and shared by the pooling ops and their gradients.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "tscope/core/dims.h"
#include "tscope/graph/attrs.h"
#include "tscope/ops/conv.h"
#include "window.h"

namespace tscope::ops::detail {

struct PoolGeometry {
  std::int64_t batch = 0;
  std::int64_t channels = 0;
  Window window;

  [[nodiscard]] Dims input_shape() const;
  [[nodiscard]] Dims output_shape() const;
};

/// `base` plus the spatial rank: "MaxPool" -> "MaxPool2d".
[[nodiscard]] std::string pool_label(std::string_view base, const Attrs& attrs);

/// Checks x (kUnknownDim entries allowed) against the attrs and resolves the output. Throws
/// TypeMismatch for a wrong rank, ShapeMismatch naming x for a kernel bigger than the padded
/// input, InvalidArgument for bad attrs or a pad not smaller than the kernel (such a window could
/// hold only padding).
[[nodiscard]] PoolGeometry pool_geometry(const Attrs& attrs, const Dims& x, std::string_view label);

/// Throws ShapeMismatch unless `value`'s known dims equal the pooling output shape (`what` names
/// the input: "dy", "h").
void check_pool_output_shape(const PoolGeometry& geometry, const Dims& value, const char* what,
                             std::string_view label);

/// The stored attrs of a pooling node (kernel_shape, strides, padding, pads, include_pad when
/// `with_include_pad`); throws InvalidArgument for lists of the wrong length.
[[nodiscard]] Attrs pool_attrs(const PoolOptions& options, int spatial_rank, bool with_include_pad,
                               std::string_view label);

/// "MaxPool2d{kernel=(2,2),stride=(2,2),pad=(0,0)}" (plus include_pad for averages).
[[nodiscard]] std::string pool_printed_name(std::string_view base, std::string_view suffix,
                                            const Attrs& attrs);

/// One compare or add per window element and output: numel(y) * kernel_volume.
[[nodiscard]] double pool_flops(const Dims& y, const Attrs& attrs);

}  // namespace tscope::ops::detail
