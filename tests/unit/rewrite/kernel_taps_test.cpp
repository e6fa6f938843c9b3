// SPDX-License-Identifier: Apache-2.0
// crop_idle_kernel_taps: a convolution whose kernel reaches past what its padded input can feed
// keeps only the taps that meet the input, with the same results, and is left alone otherwise.
#include <string>
#include <string_view>

#include "support/test_util.h"

namespace tscope {
namespace {
using testing::all_close;
using testing::random_tensor;

// `blocked` false keeps the convolution a plain Conv whose weights are the (cropped) constant, so
// the tests can read the kernel the rule left.
Function compile(const Variable& x, const Variable& y, bool crop, bool blocked = false) {
  FunctionOptions options;
  if (!crop) options.excluded_rewrites.push_back("crop_idle_kernel_taps");
  if (!blocked) options.excluded_rewrites.push_back("use_channel_blocks");
  return function({x}, {y}, {}, options);
}

const ApplyNode* only_conv(const Function& f) {
  const ApplyNode* found = nullptr;
  for (const ApplyNode* node : f.graph().toposort()) {
    const std::string_view name = node->op().name;
    if (name == "Conv" || name == "BlockedConv") {
      EXPECT_EQ(found, nullptr) << "more than one convolution";
      found = node;
    }
  }
  return found;
}

// The kernel extent of the compiled graph's convolution: its weights' dims past the first two.
Dims kernel_of(const Function& f) {
  const ApplyNode* conv = only_conv(f);
  EXPECT_NE(conv, nullptr);
  if (conv == nullptr) return {};
  const Dims& dims = conv->input(1).type().dims;
  Dims kernel;
  for (int axis = 2; axis < dims.rank(); ++axis) kernel.push_back(dims[axis]);
  return kernel;
}

struct Case {
  std::string what;
  Dims input;  // (N, C, spatial...)
  Dims weights;
  ConvOptions options;
  Dims kernel_after;  // the kernel the rule leaves
};

class CropIdleKernelTaps : public ::testing::TestWithParam<Case> {};

TEST_P(CropIdleKernelTaps, KeepsTheLiveTapsWithTheSameResults) {
  const Case& c = GetParam();
  Variable x = tensor(DType::Float32, c.input, "x");
  const int conv_line = __LINE__ + 1;
  Variable y = conv(x, constant(random_tensor(DType::Float32, c.weights, 7), "w"), c.options);
  Function cropped = compile(x, y, true);
  Function plain = compile(x, y, false);
  EXPECT_EQ(kernel_of(cropped), c.kernel_after);
  Dims full;
  for (int axis = 2; axis < c.weights.rank(); ++axis) full.push_back(c.weights[axis]);
  EXPECT_EQ(kernel_of(plain), full);
  EXPECT_EQ(only_conv(cropped)->provenance().site.line, static_cast<std::uint32_t>(conv_line));
  const Tensor value = random_tensor(DType::Float32, c.input, 3);
  const Tensor expected = plain({value})[0];
  const Tensor actual = cropped({value})[0];
  EXPECT_EQ(actual.shape(), expected.shape());
  EXPECT_TRUE(all_close(actual, expected, 1e-5, 1e-5));
  // The whole pipeline: the cropped convolution on whatever layout the plan then gives it.
  Function blocked = compile(x, y, true, true);
  EXPECT_TRUE(all_close(blocked({value})[0], expected, 1e-5, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes,
    CropIdleKernelTaps,
    ::testing::Values(
        // A 7x7 depthwise kernel, pads 3, over 2x2: taps 2..4 of each axis meet the input.
        Case{"depthwise_7x7_on_2x2",
             {2, 24, 2, 2},
             {24, 1, 7, 7},
             {.padding = Padding::symmetric({3, 3}), .groups = 24},
             {3, 3}},
        // Over 1x1 only the centre tap meets it.
        Case{"depthwise_7x7_on_1x1",
             {1, 16, 1, 1},
             {16, 1, 7, 7},
             {.padding = Padding::symmetric({3, 3}), .groups = 16},
             {1, 1}},
        // A dense 5x5 kernel, pads 2, over 3x1: the height keeps all but none, the width one tap.
        Case{"dense_5x5_on_3x1",
             {1, 4, 3, 1},
             {6, 4, 5, 5},
             {.padding = Padding::symmetric({2, 2})},
             {5, 1}},
        // Uneven pads and a dilation: pads (4, 0) and (0, 4) over a 2x2 input, dilation 2.
        Case{"dilated_uneven_pads",
             {1, 3, 2, 2},
             {5, 3, 3, 3},
             {.padding = Padding::explicit_pads({4, 0}, {0, 4}), .dilations = {2, 2}},
             {1, 1}},
        // Stride 2 over 3x3 with a 5x5 kernel and pads 2: outputs 0 and 1 read taps 0..4 at
        // input rows -2..2 and 0..4; taps 0 and 4 meet rows 0 and 2 in some output: all live.
        Case{"strided_all_live",
             {1, 2, 3, 3},
             {2, 2, 5, 5},
             {.strides = {2, 2}, .padding = Padding::symmetric({2, 2})},
             {5, 5}},
        // A 3-D convolution, 5x5x5 with pads 2 over 1x2x5.
        Case{"conv3d",
             {1, 2, 1, 2, 5},
             {3, 2, 5, 5, 5},
             {.padding = Padding::symmetric({2, 2, 2})},
             {1, 3, 5}}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.what; });

TEST(CropIdleKernelTapsLeavesAlone, UnknownExtentsAndVariableWeights) {
  // Spatial extents known only at call time: nothing to decide at compile time.
  Variable x = tensor4(DType::Float32, "x");
  Variable y = conv2d(x, constant(random_tensor(DType::Float32, {8, 1, 7, 7}, 1), "w"),
                      {.padding = Padding::symmetric({3, 3}), .groups = 8});
  EXPECT_EQ(kernel_of(compile(x, y, true)), (Dims{7, 7}));
  // Weights that change between calls (a shared variable, of fixed shape) keep their shape.
  Variable x2 = tensor(DType::Float32, {1, 8, 2, 2}, "x");
  Variable w = shared_fixed_shape(random_tensor(DType::Float32, {8, 1, 7, 7}, 2), "w");
  Variable y2 = conv2d(x2, w, {.padding = Padding::symmetric({3, 3}), .groups = 8});
  EXPECT_EQ(kernel_of(compile(x2, y2, true)), (Dims{7, 7}));
}

}  // namespace
}  // namespace tscope
