// SPDX-License-Identifier: Apache-2.0
#include <array>
#include <cstdint>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "tscope/graph/variable.h"
#include "tscope/ops/registry.h"
#include "tscope/rewrite/kernel_tap_rules.h"

namespace tscope::rewrite {
namespace {

// The taps of one spatial axis that meet the input: [first, last). Tap k at output o reads input
// position o * stride + k * dilation - pad_begin.
struct TapRange {
  std::int64_t first = 0;
  std::int64_t last = 0;
};

bool tap_meets_input(std::int64_t tap,
                     std::int64_t input,
                     std::int64_t output,
                     std::int64_t stride,
                     std::int64_t dilation,
                     std::int64_t pad_begin) {
  for (std::int64_t o = 0; o < output; ++o) {
    const std::int64_t position = o * stride + tap * dilation - pad_begin;
    if (position >= 0 && position < input) return true;
  }
  return false;
}

std::optional<TapRange> live_taps(std::int64_t kernel,
                                  std::int64_t input,
                                  std::int64_t output,
                                  std::int64_t stride,
                                  std::int64_t dilation,
                                  std::int64_t pad_begin) {
  TapRange range{0, kernel};
  while (range.first < kernel &&
         !tap_meets_input(range.first, input, output, stride, dilation, pad_begin)) {
    ++range.first;
  }
  while (range.last > range.first &&
         !tap_meets_input(range.last - 1, input, output, stride, dilation, pad_begin)) {
    --range.last;
  }
  // No tap meets the input (the output is all bias): leave such a node alone.
  if (range.first == range.last) return std::nullopt;
  return range;
}

Replacements crop_idle_kernel_taps(const FunctionGraph&, ApplyNode& node) {
  const Variable& x = node.input(0);
  const Variable& w = node.input(1);
  if (w.kind() != VariableKind::Constant || node.attrs().get_string("padding") != "explicit") {
    return {};
  }
  const Dims& x_dims = x.type().dims;
  const Dims& w_dims = w.type().dims;
  const Dims& out_dims = node.output(0).type().dims;
  const int spatial_rank = x_dims.rank() - 2;
  if (spatial_rank < 1 || w_dims.rank() != x_dims.rank()) return {};
  const std::vector<std::int64_t>& strides = node.attrs().get_ints("strides");
  const std::vector<std::int64_t>& dilations = node.attrs().get_ints("dilations");
  std::vector<std::int64_t> pads_begin = node.attrs().get_ints("pads_begin");
  std::vector<std::int64_t> pads_end = node.attrs().get_ints("pads_end");
  const Tensor& weights = w.constant_value();
  Dims cropped_dims = weights.shape();
  std::int64_t offset = 0;
  bool cropped = false;
  for (int axis = 0; axis < spatial_rank; ++axis) {
    const auto a = static_cast<std::size_t>(axis);
    const std::int64_t input = x_dims[axis + 2];
    const std::int64_t output = out_dims[axis + 2];
    if (input == kUnknownDim || output == kUnknownDim) return {};
    const std::optional<TapRange> live =
        live_taps(w_dims[axis + 2], input, output, strides[a], dilations[a], pads_begin[a]);
    if (!live) return {};
    const std::int64_t cut_begin = live->first;
    const std::int64_t cut_end = w_dims[axis + 2] - live->last;
    if (cut_begin == 0 && cut_end == 0) continue;
    // The remaining taps read the same positions: the pads shrink by the cut taps' reach. A pad
    // that would go negative means a cut tap read the input after all; tap_meets_input rules
    // that out, but a malformed node is left alone rather than rewritten.
    pads_begin[a] -= cut_begin * dilations[a];
    pads_end[a] -= cut_end * dilations[a];
    if (pads_begin[a] < 0 || pads_end[a] < 0) return {};
    cropped_dims[axis + 2] = live->last - live->first;
    offset += cut_begin * weights.strides()[axis + 2];
    cropped = true;
  }
  if (!cropped) return {};
  const Tensor sliced = weights.view(cropped_dims, weights.strides(), weights.offset() + offset);
  const Variable new_weights =
      make_constant(sliced.clone(), w.name() + "_live_taps", std::source_location::current());
  Attrs attrs = node.attrs();
  attrs.set("pads_begin", pads_begin);
  attrs.set("pads_end", pads_end);
  const auto conv = ApplyNode::create(node.op(), {x, new_weights}, attrs, node.provenance());
  // The output extent is unchanged by construction; a node whose type rule disagrees (an
  // unforeseen attribute) is left alone.
  if (conv->output(0).type().dims != out_dims) return {};
  return {conv->output(0)};
}

}  // namespace

LocalRule kernel_tap_rule() {
  return {"crop_idle_kernel_taps", {&op_def("Conv")}, crop_idle_kernel_taps};
}

}  // namespace tscope::rewrite
