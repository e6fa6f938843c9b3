// SPDX-License-Identifier: Apache-2.0
#include <cstdint>
#include <vector>

#include "tscope/ops/registry.h"
#include "tscope/rewrite/pattern.h"
#include "tscope/rewrite/pointwise_pool_rules.h"

namespace tscope::rewrite {
namespace {

bool all_equal(const std::vector<std::int64_t>& values, std::int64_t expected) {
  for (const std::int64_t value : values) {
    if (value != expected) return false;
  }
  return true;
}

// Whether `conv` is a 1x1 convolution with strides 1 and no padding: every output pixel is the
// same linear map of the input pixel at its place (the bias, when there is one, is a separate
// add, which this rule does not look through).
bool is_pointwise(const ApplyNode& conv) {
  const Dims& w = conv.input(1).type().dims;
  const Attrs& attrs = conv.attrs();
  if (w.rank() != conv.input(0).rank() || w.rank() < 3) return false;
  for (int axis = 2; axis < w.rank(); ++axis) {
    if (w[axis] != 1) return false;
  }
  return attrs.get_string("padding") == "explicit" && all_equal(attrs.get_ints("strides"), 1) &&
         all_equal(attrs.get_ints("pads_begin"), 0) && all_equal(attrs.get_ints("pads_end"), 0);
}

// The product of the spatial extents of `dims`, or -1 when one is unknown.
std::int64_t pixels(const Dims& dims) {
  std::int64_t count = 1;
  for (int axis = 2; axis < dims.rank(); ++axis) {
    if (dims[axis] == kUnknownDim) return -1;
    count *= dims[axis];
  }
  return count;
}

Replacements pool_before_pointwise_conv(const FunctionGraph& graph, ApplyNode& pool) {
  static const OpDef& conv_op = op_def("Conv");
  const Variable& y = pool.input(0);
  const ApplyNode* conv = producer_of(y, conv_op);
  if (conv == nullptr || !read_once(graph, y) || !is_pointwise(*conv)) return {};
  const Variable& x = conv->input(0);
  const std::int64_t before = pixels(y.type().dims);
  const std::int64_t after = pixels(pool.output(0).type().dims);
  if (before < 0 || after < 0 || after >= before || !(x.type().dims.rank() == y.rank())) return {};
  const auto pooled = ApplyNode::create(pool.op(), {x}, pool.attrs(), pool.provenance());
  const auto moved = ApplyNode::create(conv->op(), {pooled->output(0), conv->input(1)},
                                       conv->attrs(), conv->provenance());
  // The extents agree by construction; a node whose type rule disagrees is left alone.
  if (!(moved->output(0).type() == pool.output(0).type())) return {};
  return {moved->output(0)};
}

}  // namespace

LocalRule pointwise_pool_rule() {
  return {"pool_before_pointwise_conv", {&op_def("AveragePool")}, pool_before_pointwise_conv};
}

}  // namespace tscope::rewrite
