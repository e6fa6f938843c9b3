// SPDX-License-Identifier: Apache-2.0
// What the registry and the profile show of the conv category: Theano-like printed names, flop
// and byte costs, every op complete (reference kernel, cost, printed name, pullback), and equal
// convolutions merging into one node.
#include "conv_test_util.h"

namespace tscope {
namespace {

std::string printed(const Variable& v) { return v.owner()->op_string(); }

TEST(ConvContract, PrintedNamesReadLikeTheano) {
  Variable x = tensor(DType::Float32, {2, 3, 8, 8}, "x");
  Variable w = tensor(DType::Float32, {4, 3, 3, 3}, "w");
  EXPECT_EQ(printed(conv2d(x, w)), "Conv2d{stride=(1,1),pad=(0,0),dilation=(1,1),groups=1}");
  EXPECT_EQ(printed(conv2d(x, w, {.strides = {2, 2}, .padding = Padding::same()})),
            "Conv2d{stride=(2,2),pad=same,dilation=(1,1),groups=1}");
  EXPECT_EQ(printed(conv2d(x, w, {.padding = Padding::explicit_pads({0, 1}, {1, 1}), .dilations = {2, 1}})),
            "Conv2d{stride=(1,1),pad_begin=(0,1),pad_end=(1,1),dilation=(2,1),groups=1}");
  Variable x3 = tensor(DType::Float32, {1, 4, 6, 6, 6}, "x3");
  Variable w3 = tensor(DType::Float32, {4, 2, 3, 3, 3}, "w3");
  Variable y3 = conv3d(x3, w3, {.padding = Padding::full(), .groups = 2});
  EXPECT_EQ(printed(y3), "Conv3d{stride=(1,1,1),pad=full,dilation=(1,1,1),groups=2}");
  const std::vector<Variable> g = grad(sum(y3), {x3, w3});
  EXPECT_EQ(printed(g[0]), "Conv3dGradI{stride=(1,1,1),pad=full,dilation=(1,1,1),groups=2}");
  EXPECT_EQ(printed(g[1]), "Conv3dGradW{stride=(1,1,1),pad=full,dilation=(1,1,1),groups=2}");
  EXPECT_EQ(printed(max_pool2d(x, {.kernel = {2, 2}})), "MaxPool2d{kernel=(2,2),stride=(2,2),pad=(0,0)}");
  EXPECT_EQ(printed(avg_pool3d(x3, {.kernel = {3, 3, 3}, .strides = {1, 1, 1},
                                    .padding = Padding::symmetric({1, 1, 1}), .include_pad = true})),
            "AvgPool3d{kernel=(3,3,3),stride=(1,1,1),pad=(1,1,1),include_pad=True}");
  Variable pooled = max_pool2d(x, {.kernel = {2, 2}});
  EXPECT_EQ(printed(grad(sum(pooled), {x})[0]), "MaxPool2dGrad{kernel=(2,2),stride=(2,2),pad=(0,0)}");
  Variable averaged = avg_pool2d(x, {.kernel = {2, 2}});
  EXPECT_EQ(printed(grad(sum(averaged), {x})[0]),
            "AvgPool2dGrad{kernel=(2,2),stride=(2,2),pad=(0,0),include_pad=False}");
}

Cost cost_of(const Variable& v, const std::vector<Dims>& inputs) {
  const OpDef& op = v.owner()->op();
  std::vector<DType> dtypes(inputs.size(), DType::Float32);
  const std::vector<Dims> outputs = {v.type().dims};
  return op.cost(CostContext{op, inputs, outputs, dtypes, v.owner()->attrs()});
}

TEST(ConvContract, CostCountsMultiplyAddsAndBytes) {
  // y (2, 4, 5, 5): each of 200 outputs sums 3 channels x 9 taps, 2 flops each.
  Variable x = tensor(DType::Float32, {2, 3, 7, 7}, "x");
  Variable w = tensor(DType::Float32, {4, 3, 3, 3}, "w");
  Variable y = conv2d(x, w);
  const Cost forward = cost_of(y, {{2, 3, 7, 7}, {4, 3, 3, 3}});
  EXPECT_EQ(forward.flops, 2.0 * 200 * 3 * 9);
  EXPECT_EQ(forward.bytes, (294.0 + 108.0 + 200.0) * 4.0);
  const std::vector<Variable> g = grad(sum(y), {x, w});
  EXPECT_EQ(cost_of(g[0], {{4, 3, 3, 3}, {2, 4, 5, 5}, {4}}).flops, forward.flops);
  EXPECT_EQ(cost_of(g[1], {{2, 3, 7, 7}, {2, 4, 5, 5}, {4}}).flops, forward.flops);
  // Groups divide the work: 2 groups of 2 channels each.
  Variable xg = tensor(DType::Float32, {1, 4, 5, 5}, "xg");
  Variable wg = tensor(DType::Float32, {6, 2, 3, 3}, "wg");
  EXPECT_EQ(cost_of(conv2d(xg, wg, {.groups = 2}), {{1, 4, 5, 5}, {6, 2, 3, 3}}).flops,
            2.0 * (6 * 9) * 2 * 9);
  // Pooling: one operation per window element.
  Variable p = max_pool2d(x, {.kernel = {3, 3}, .strides = {2, 2}});  // (2, 3, 3, 3)
  EXPECT_EQ(cost_of(p, {{2, 3, 7, 7}}).flops, 54.0 * 9);
}

TEST(ConvContract, EveryConvOpIsComplete) {
  for (const char* name : {"Conv", "ConvGradI", "ConvGradW", "ConvTranspose", "MaxPool", "MaxPoolGrad",
                           "MaxPoolGradGrad", "AveragePool", "AveragePoolGrad"}) {
    const OpDef& op = op_def(name);
    EXPECT_TRUE(op.reference.available()) << name;
    EXPECT_EQ(op.reference.name, "ref") << name;
    EXPECT_NE(op.cost, nullptr) << name;
    EXPECT_NE(op.print, nullptr) << name;
    EXPECT_NE(op.pullback, nullptr) << name;
    EXPECT_FALSE(op.summary.empty()) << name;
    if (std::string(name) != "MaxPoolGradGrad") {
      EXPECT_EQ(op.fast.name, "dnnl") << name;
    }
  }
}

TEST(ConvContract, EqualConvolutionsShareAttrs) {
  // valid and explicit zero pads are stored alike, so merging sees one convolution.
  Variable x = tensor(DType::Float32, {1, 2, 5, 5}, "x");
  Variable w = tensor(DType::Float32, {2, 2, 3, 3}, "w");
  EXPECT_EQ(conv2d(x, w).owner()->attrs(),
            conv2d(x, w, {.strides = {1, 1}, .padding = Padding::symmetric({0, 0}), .dilations = {1, 1}})
                .owner()
                ->attrs());
  EXPECT_EQ(conv2d(x, w).owner()->attrs(), conv(x, w).owner()->attrs());
}

}  // namespace
}  // namespace tscope
