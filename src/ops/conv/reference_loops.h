// SPDX-License-Identifier: Apache-2.0
// The reference kernels' loops. A convolution, its input gradient and its weight gradient are one
// bilinear form read three ways, so all three walk the same taps: every (x element, w element,
// y element) triple the convolution multiplies. Pooling walks each window's in-range elements.
// Indices are flat row-major positions of contiguous copies, so strides never enter the loops.
#pragma once
#include <cstdint>
#include <vector>

#include "conv_geometry.h"
#include "pool_geometry.h"
#include "tscope/core/tensor.h"

namespace tscope::ops::detail {

/// Calls tap(x_index, w_index, y_index) for every product term of the convolution.
template <class Tap>
void for_each_conv_tap(const ConvGeometry& g, Tap&& tap);

/// Calls window(y_index, in_range) for every output of the pooling, with the flat x indices of
/// the window's elements inside the input (row-major window order).
template <class Visit>
void for_each_pool_window(const PoolGeometry& g, Visit&& window);

/// Writes `values` (one per element, row-major) into the contiguous float tensor `out`.
void store_doubles(Tensor& out, const std::vector<double>& values);

// ---- implementation ----

/// A window lifted to three spatial axes (leading axes of extent 1), so one loop nest serves 2-D
/// and 3-D.
struct Window3 {
  Spatial input, kernel, stride, dilation, pad_begin, output;
};
[[nodiscard]] Window3 lift_to_3d(const Window& window);

template <class Tap>
void for_each_conv_tap(const ConvGeometry& g, Tap&& tap) {
  const Window3 w = lift_to_3d(g.window);
  const std::int64_t out_per_group = g.out_channels / g.groups;
  const std::int64_t in_per_group = g.in_channels / g.groups;
  const std::int64_t in_volume = w.input[0] * w.input[1] * w.input[2];
  const std::int64_t out_volume = w.output[0] * w.output[1] * w.output[2];
  const std::int64_t kernel_volume = w.kernel[0] * w.kernel[1] * w.kernel[2];
  for (std::int64_t n = 0; n < g.batch; ++n) {
    for (std::int64_t o = 0; o < g.out_channels; ++o) {
      const std::int64_t group = o / out_per_group;
      for (std::int64_t od = 0; od < w.output[0]; ++od) {
        for (std::int64_t oh = 0; oh < w.output[1]; ++oh) {
          for (std::int64_t ow = 0; ow < w.output[2]; ++ow) {
            const std::int64_t y_index =
                (n * g.out_channels + o) * out_volume + (od * w.output[1] + oh) * w.output[2] + ow;
            for (std::int64_t ci = 0; ci < in_per_group; ++ci) {
              const std::int64_t c = group * in_per_group + ci;
              for (std::int64_t kd = 0; kd < w.kernel[0]; ++kd) {
                const std::int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
                if (id < 0 || id >= w.input[0]) continue;
                for (std::int64_t kh = 0; kh < w.kernel[1]; ++kh) {
                  const std::int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
                  if (ih < 0 || ih >= w.input[1]) continue;
                  for (std::int64_t kw = 0; kw < w.kernel[2]; ++kw) {
                    const std::int64_t iw = ow * w.stride[2] - w.pad_begin[2] + kw * w.dilation[2];
                    if (iw < 0 || iw >= w.input[2]) continue;
                    const std::int64_t x_index =
                        (n * g.in_channels + c) * in_volume + (id * w.input[1] + ih) * w.input[2] + iw;
                    const std::int64_t w_index = (o * in_per_group + ci) * kernel_volume +
                                                 (kd * w.kernel[1] + kh) * w.kernel[2] + kw;
                    tap(x_index, w_index, y_index);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

template <class Visit>
void for_each_pool_window(const PoolGeometry& g, Visit&& window) {
  const Window3 w = lift_to_3d(g.window);
  const std::int64_t in_volume = w.input[0] * w.input[1] * w.input[2];
  const std::int64_t out_volume = w.output[0] * w.output[1] * w.output[2];
  std::vector<std::int64_t> in_range;
  for (std::int64_t plane = 0; plane < g.batch * g.channels; ++plane) {
    for (std::int64_t od = 0; od < w.output[0]; ++od) {
      for (std::int64_t oh = 0; oh < w.output[1]; ++oh) {
        for (std::int64_t ow = 0; ow < w.output[2]; ++ow) {
          in_range.clear();
          for (std::int64_t kd = 0; kd < w.kernel[0]; ++kd) {
            const std::int64_t id = od * w.stride[0] - w.pad_begin[0] + kd;
            if (id < 0 || id >= w.input[0]) continue;
            for (std::int64_t kh = 0; kh < w.kernel[1]; ++kh) {
              const std::int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh;
              if (ih < 0 || ih >= w.input[1]) continue;
              for (std::int64_t kw = 0; kw < w.kernel[2]; ++kw) {
                const std::int64_t iw = ow * w.stride[2] - w.pad_begin[2] + kw;
                if (iw < 0 || iw >= w.input[2]) continue;
                in_range.push_back(plane * in_volume + (id * w.input[1] + ih) * w.input[2] + iw);
              }
            }
          }
          window(plane * out_volume + (od * w.output[1] + oh) * w.output[2] + ow, in_range);
        }
      }
    }
  }
}

}  // namespace tscope::ops::detail
