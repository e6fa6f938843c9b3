// SPDX-License-Identifier: Apache-2.0
// The shapes of one convolution: x (N, C, spatial...), w (O, C / groups, kernel...) and
// y (N, O, out...), checked and resolved once and shared by Conv, ConvGradW and ConvGradI (type
// rules with unknown dims, kernels with actual shapes, costs).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "tscope/core/dims.h"
#include "tscope/graph/attrs.h"
#include "tscope/graph/op_def.h"
#include "window.h"

namespace tscope::ops::detail {

struct ConvGeometry {
  std::int64_t batch = 0;
  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;
  std::int64_t groups = 1;
  Window window;

  [[nodiscard]] Dims input_shape() const;
  [[nodiscard]] Dims weight_shape() const;
  [[nodiscard]] Dims output_shape() const;
};

/// "Conv2d" or "Conv3d", from the number of spatial axes in the attrs.
[[nodiscard]] std::string conv_label(const Attrs& attrs);

/// Checks x and w (kUnknownDim entries allowed) against each other and the attrs and resolves the
/// output. Throws TypeMismatch for a wrong rank, ShapeMismatch naming both shapes for channels
/// that disagree, groups that do not divide the channels, or a kernel bigger than the padded
/// input, and InvalidArgument for bad attrs. `label` starts each message ("Conv2dGradI").
[[nodiscard]] ConvGeometry conv_geometry(const Attrs& attrs, const Dims& x, const Dims& w,
                                         std::string_view label);

/// Throws ShapeMismatch unless dy's known dims equal the geometry's output shape.
void check_conv_output_grad(const ConvGeometry& geometry, const Dims& dy, std::string_view label);

/// The type rule's dtype check: every listed input is float32/float64, all of one dtype.
void check_conv_float_inputs(const InferContext& ctx, std::initializer_list<int> indices,
                             std::string_view label);

/// A shape input of ConvGradW/ConvGradI/AveragePoolGrad at graph-build time: a 1-D integer vector
/// of `rank` entries, each known or kUnknownDim. Throws TypeMismatch for another type.
[[nodiscard]] Dims static_shape_input(const Variable& shape, int rank, std::string_view label);
/// The same at run time, from the shape tensor's values.
[[nodiscard]] Dims shape_from_tensor(const Tensor& shape, int rank, std::string_view label);

/// A 1-D int64 Variable holding `x`'s shape: a constant when x's dims are all static, else Shape.
[[nodiscard]] Variable shape_variable(const Variable& x);

/// 2 * N * O * out_volume * (C / groups) * kernel_volume, from dy (N, O, out...) and w.
[[nodiscard]] double conv_flops(const Dims& dy, const Dims& w);

}  // namespace tscope::ops::detail
