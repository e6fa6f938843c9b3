// SPDX-License-Identifier: Apache-2.0
#include "depthwise_grad_weights.h"

#include <algorithm>
#include <vector>

#include "tscope/threads/parallel_for.h"

namespace tscope::ops::detail {
namespace {
// The first output index whose input index o * stride + offset is at least 0, and one past the
// last whose input index is below `extent`; an empty range when none is.
struct OutputRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

OutputRange in_range_outputs(std::int64_t output, std::int64_t stride, std::int64_t offset,
                             std::int64_t extent) {
  // o * stride + offset >= 0  <=>  o >= ceil(-offset / stride)
  const std::int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  // o * stride + offset <= extent - 1  <=>  o <= floor((extent - 1 - offset) / stride)
  const std::int64_t last_input = extent - 1 - offset;
  const std::int64_t end = last_input < 0 ? 0 : last_input / stride + 1;
  return {std::min(first, output), std::clamp(end, std::int64_t{0}, output)};
}

void channel_taps(const ConvGeometry& g, const float* x, const float* dy, float* dw,
                  std::int64_t channel, std::vector<float>& row) {
  const Window& w = g.window;
  const std::int64_t height = w.input[0], width = w.input[1];
  const std::int64_t out_height = w.output[0], out_width = w.output[1];
  const std::int64_t channels = g.in_channels;
  for (std::int64_t kh = 0; kh < w.kernel[0]; ++kh) {
    const std::int64_t row_offset = kh * w.dilation[0] - w.pad_begin[0];
    const OutputRange rows = in_range_outputs(out_height, w.stride[0], row_offset, height);
    for (std::int64_t kw = 0; kw < w.kernel[1]; ++kw) {
      const std::int64_t column_offset = kw * w.dilation[1] - w.pad_begin[1];
      const OutputRange columns = in_range_outputs(out_width, w.stride[1], column_offset, width);
      // A row of float accumulators, one per output column: the inner loop is an elementwise
      // multiply-add that vectorises; the row is summed in double at the end.
      std::fill(row.begin(), row.end(), 0.0f);
      for (std::int64_t n = 0; n < g.batch; ++n) {
        const float* x_plane = x + (n * channels + channel) * height * width;
        const float* dy_plane = dy + (n * channels + channel) * out_height * out_width;
        for (std::int64_t oh = rows.begin; oh < rows.end; ++oh) {
          // x's index for output column ow is x_row + ow * stride, inside the plane for every
          // column of the range.
          const std::int64_t x_row = (oh * w.stride[0] + row_offset) * width + column_offset;
          const float* dy_row = dy_plane + oh * out_width;
          if (w.stride[1] == 1) {
            for (std::int64_t ow = columns.begin; ow < columns.end; ++ow) {
              row[static_cast<std::size_t>(ow)] += dy_row[ow] * x_plane[x_row + ow];
            }
          } else {
            for (std::int64_t ow = columns.begin; ow < columns.end; ++ow) {
              row[static_cast<std::size_t>(ow)] += dy_row[ow] * x_plane[x_row + ow * w.stride[1]];
            }
          }
        }
      }
      double total = 0;
      for (const float value : row) total += value;
      dw[(channel * w.kernel[0] + kh) * w.kernel[1] + kw] = static_cast<float>(total);
    }
  }
}
}  // namespace

bool uses_depthwise_grad_weights_2d(std::int64_t channels, std::int64_t groups, const Dims& w) {
  return w.rank() == 4 && groups == channels && w[0] == groups && w[1] == 1 && w[2] * w[3] > 9;
}

void depthwise_grad_weights_2d(const ConvGeometry& g, const float* x, const float* dy, float* dw) {
  const Window& w = g.window;
  const std::int64_t work = g.in_channels * w.kernel_volume() * g.batch * w.output_volume();
  threads::for_each_part(g.in_channels, threads::parts_for(work),
                         [&](std::int64_t begin, std::int64_t end) {
                           std::vector<float> row(static_cast<std::size_t>(w.output[1]));
                           for (std::int64_t c = begin; c < end; ++c) {
                             channel_taps(g, x, dy, dw, c, row);
                           }
                         });
}

}  // namespace tscope::ops::detail
