// SPDX-License-Identifier: Apache-2.0
// Resize imported from ONNX: the ONNX operator documentation's examples (worked by hand), every
// nearest_mode and coordinate transformation against a direct evaluation of the formulas on one
// axis, gradients, and the Unsupported cases.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>

#include "gradient_check.h"
#include "model_builder.h"
#include "support/test_util.h"
#include "tscope/grad/grad.h"
#include "tscope/onnx/import.h"
#include "tscope/ops/reduce.h"

namespace tscope::onnx {
namespace {

using testing::DimSpec;
using testing::ModelBuilder;
using testing::add_string_attribute;
constexpr int kFloat = ::onnx::TensorProto::FLOAT;
constexpr int kDouble = ::onnx::TensorProto::DOUBLE;

struct ResizeCase {
  Dims in;
  std::vector<float> scales;  ///< empty: sizes
  std::vector<std::int64_t> sizes;
  std::string mode = "nearest";
  std::string transformation;  ///< empty: the default (half_pixel)
  std::string rounding;        ///< empty: the default (round_prefer_floor)
  int elem_type = kFloat;
};

ModelBuilder resize_model(const ResizeCase& test) {
  ModelBuilder model(13);
  model.input("x", test.elem_type, std::vector<DimSpec>(test.in.begin(), test.in.end()));
  model.output("y", test.elem_type, {});
  std::vector<std::string> inputs{"x", ""};
  if (!test.scales.empty()) {
    model.float_initializer("scales", {static_cast<std::int64_t>(test.scales.size())}, test.scales);
    inputs.emplace_back("scales");
  } else {
    model.int64_initializer("sizes", test.sizes);
    inputs.emplace_back("");
    inputs.emplace_back("sizes");
  }
  auto& node = model.node("Resize", inputs, {"y"}, "resize");
  add_string_attribute(node, "mode", test.mode);
  if (!test.transformation.empty())
    add_string_attribute(node, "coordinate_transformation_mode", test.transformation);
  if (!test.rounding.empty()) add_string_attribute(node, "nearest_mode", test.rounding);
  return model;
}

Tensor run_resize(const ResizeCase& test, const Tensor& x) {
  ImportOptions options;
  options.initializers_as_constants = true;
  const ImportedModel imported =
      import_model_bytes(resize_model(test).bytes(), "resize.onnx", options);
  Function f = function(imported.input_variables(), imported.output_variables());
  return f({x})[0];
}

Tensor counting(const Dims& dims) {
  std::vector<float> values;
  for (std::int64_t i = 0; i < dims.product(); ++i) values.push_back(static_cast<float>(i + 1));
  return Tensor::from_vector<float>(dims, values);
}

TEST(OnnxResize, DocumentationExamples) {
  const Tensor two_by_two = counting({1, 1, 2, 2});
  EXPECT_EQ(run_resize({{1, 1, 2, 2}, {1, 1, 2, 3}, {}}, two_by_two).to_doubles(),
            (std::vector<double>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  EXPECT_TRUE(tscope::testing::all_close(
      run_resize({{1, 1, 2, 2}, {1, 1, 2, 2}, {}, "linear"}, two_by_two),
      Tensor::from_vector<float>(
          {1, 1, 4, 4}, {1.0f, 1.25f, 1.75f, 2.0f, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f,
                         3.5f, 3.0f, 3.25f, 3.75f, 4.0f})));
  const float third = 1.0f / 3.0f;
  EXPECT_TRUE(tscope::testing::all_close(
      run_resize({{1, 1, 2, 2}, {1, 1, 2, 2}, {}, "linear", "align_corners"}, two_by_two),
      Tensor::from_vector<float>(
          {1, 1, 4, 4}, {1, 1 + third, 2 - third, 2, 2 - third, 2, 2 + third, 3 - third, 2 + third,
                         3 - third, 3, 3 + third, 3, 3 + third, 4 - third, 4})));
  const Tensor two_by_four = counting({1, 1, 2, 4});
  EXPECT_EQ(run_resize({{1, 1, 2, 4}, {1, 1, 0.6f, 0.6f}, {}}, two_by_four).to_doubles(),
            (std::vector<double>{1, 3}));
  EXPECT_TRUE(tscope::testing::all_close(
      run_resize({{1, 1, 2, 4}, {1, 1, 0.6f, 0.6f}, {}, "linear"}, two_by_four),
      Tensor::from_vector<float>({1, 1, 1, 2}, {2.6666665f, 4.3333331f})));
  EXPECT_TRUE(tscope::testing::all_close(
      run_resize({{1, 1, 4, 4}, {}, {1, 1, 3, 1}, "linear", "pytorch_half_pixel"},
                 counting({1, 1, 4, 4})),
      Tensor::from_vector<float>({1, 1, 3, 1}, {1.6666666f, 7.0f, 12.333333f})));
}

/// One axis of `in` rows resized to `out`, straight from the ONNX formulas.
std::vector<double> one_axis(const ResizeCase& test, std::int64_t in, std::int64_t out) {
  const double scale = static_cast<double>(out) / static_cast<double>(in);
  std::vector<double> result;
  for (std::int64_t i = 0; i < out; ++i) {
    const double x = static_cast<double>(i);
    double source = (x + 0.5) / scale - 0.5;  // half_pixel
    if (test.transformation == "asymmetric") source = x / scale;
    if (test.transformation == "align_corners")
      source = out == 1 ? 0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
    if (test.transformation == "tf_half_pixel_for_nn") source = (x + 0.5) / scale;
    if (test.transformation == "pytorch_half_pixel" && out == 1) source = 0;
    auto value = [in](double row) { return std::clamp(row, 0.0, static_cast<double>(in - 1)) + 1; };
    if (test.mode == "linear") {
      const double low = std::floor(source);
      result.push_back(value(low) * (1 - (source - low)) + value(low + 1) * (source - low));
      continue;
    }
    double row = std::round(source);  // halves away from zero, fixed below
    if (source - std::floor(source) == 0.5)
      row = test.rounding == "round_prefer_ceil" ? std::ceil(source) : std::floor(source);
    if (test.rounding == "floor") row = std::floor(source);
    if (test.rounding == "ceil") row = std::ceil(source);
    result.push_back(value(row));
  }
  return result;
}

TEST(OnnxResize, EveryModeOnOneAxisMatchesTheFormulas) {
  const std::vector<std::string> transformations{
      "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"};
  const std::vector<std::string> roundings{"round_prefer_floor", "round_prefer_ceil", "floor",
                                           "ceil"};
  for (std::int64_t out : {1, 3, 5, 8, 12}) {
    for (const std::string& transformation : transformations) {
      for (const std::string& rounding : roundings) {
        const ResizeCase test{{1, 5}, {}, {1, out}, "nearest", transformation, rounding};
        EXPECT_EQ(run_resize(test, counting({1, 5})).to_doubles(), one_axis(test, 5, out))
            << transformation << " " << rounding << " to " << out;
      }
      if (transformation == "tf_half_pixel_for_nn") continue;
      const ResizeCase linear{{1, 5}, {}, {1, out}, "linear", transformation, ""};
      const std::vector<double> expected = one_axis(linear, 5, out);
      EXPECT_TRUE(tscope::testing::all_close(
          run_resize(linear, counting({1, 5})),
          Tensor::from_doubles(DType::Float32, {1, out}, expected), 1e-6))
          << transformation << " linear to " << out;
    }
  }
}

TEST(OnnxResize, GradientsSumTheWeightsOfEverySourceElement) {
  // Nearest 2x upsampling reads every element 4 times; linear reads with weights that sum to the
  // number of output elements.
  for (const std::string mode : {"nearest", "linear"}) {
    const ImportedModel imported = import_model_bytes(
        resize_model({{1, 1, 2, 3}, {1, 1, 2, 2}, {}, mode}).bytes(), "resize.onnx");
    const Variable x = imported.inputs[0].variable;
    const Variable gx = grad(sum(imported.outputs[0].variable), {x})[0];
    Function f = function({x}, {gx});
    const Tensor g = f({counting({1, 1, 2, 3})})[0];
    double total = 0;
    for (double value : g.to_doubles()) total += value;
    EXPECT_NEAR(total, 24.0, 1e-5) << mode;
    if (mode == "nearest") {
      EXPECT_EQ(g.to_doubles(), std::vector<double>(6, 4.0));
    }
  }
}

TEST(OnnxResize, UnsupportedFormsAreReported) {
  const auto kind_of = [](const ModelBuilder& model) {
    try {
      (void)import_model_bytes(model.bytes(), "resize.onnx");
    } catch (const Error& error) {
      return error.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind_of(resize_model({{1, 1, 2, 2}, {1, 1, 2, 2}, {}, "cubic"})),
            ErrorKind::Unsupported);
  EXPECT_EQ(kind_of(resize_model({{1, 1, 2, 2}, {1, 1, 2, 2}, {}, "linear", "tf_crop_and_resize"})),
            ErrorKind::Unsupported);
  ModelBuilder runtime_scales(13);
  runtime_scales.input("x", kFloat, {1, 1, 2, 2})
      .input("scales", kFloat, {4})
      .output("y", kFloat, {});
  runtime_scales.node("Resize", {"x", "", "scales"}, {"y"}, "resize");
  EXPECT_EQ(kind_of(runtime_scales), ErrorKind::Unsupported);
  ModelBuilder exclude = resize_model({{1, 1, 2, 2}, {1, 1, 2, 2}, {}});
  testing::add_int_attribute(*exclude.proto().mutable_graph()->mutable_node(0), "exclude_outside",
                             1);
  EXPECT_EQ(kind_of(exclude), ErrorKind::Unsupported);
  // Scales that would overflow the output extent are errors, not undefined conversions.
  for (float scale : {std::numeric_limits<float>::infinity(),
                      std::numeric_limits<float>::quiet_NaN(), 1e30f, -2.0f}) {
    EXPECT_EQ(kind_of(resize_model({{1, 1, 2, 2}, {1, 1, scale, 1}, {}})),
              ErrorKind::InvalidArgument)
        << scale;
  }
}

TEST(OnnxResize, LegacyOpsUseAsymmetricCoordinatesRoundedDown) {
  // Upsample (opset 7: scales as an attribute) and Resize-10 (scales as an input).
  ModelBuilder upsample(7);
  upsample.input("x", kFloat, {1, 1, 2, 2}).output("y", kFloat, {});
  auto* scales = upsample.node("Upsample", {"x"}, {"y"}, "up").add_attribute();
  scales->set_name("scales");
  scales->set_type(::onnx::AttributeProto::FLOATS);
  for (float scale : {1.0f, 1.0f, 2.0f, 3.0f}) scales->add_floats(scale);
  const ImportedModel imported = import_model_bytes(upsample.bytes(), "upsample.onnx");
  Function f = function(imported.input_variables(), imported.output_variables());
  // Columns 0, 1/3, 2/3 read column 0; rows 0, 1/2 read row 0.
  EXPECT_EQ(f({counting({1, 1, 2, 2})})[0].to_doubles(),
            (std::vector<double>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  ModelBuilder resize10(10);
  resize10.input("x", kFloat, {1, 4}).output("y", kFloat, {});
  resize10.float_initializer("scales", {2}, {1.0f, 0.75f});
  add_string_attribute(resize10.node("Resize", {"x", "scales"}, {"y"}, "r10"), "mode", "linear");
  const ImportedModel linear = import_model_bytes(resize10.bytes(), "resize10.onnx");
  Function g = function(linear.input_variables(), linear.output_variables());
  // Output columns 0, 1, 2 sample 0, 4/3, 8/3.
  EXPECT_TRUE(tscope::testing::all_close(
      g({counting({1, 4})})[0], Tensor::from_vector<float>({1, 3}, {1.0f, 7.0f / 3, 11.0f / 3})));
}

TEST(OnnxResize, GradientsMatchFiniteDifferences) {
  const std::vector<ResizeCase> cases{
      {{1, 1, 2, 3}, {1, 1, 2, 1.5f}, {}, "linear", "half_pixel", "", kDouble},
      {{1, 1, 4, 3}, {}, {1, 1, 3, 5}, "linear", "align_corners", "", kDouble},
      {{1, 1, 4, 4}, {}, {1, 1, 3, 1}, "linear", "pytorch_half_pixel", "", kDouble},
      {{1, 1, 3, 2}, {}, {1, 1, 5, 3}, "nearest", "asymmetric", "round_prefer_ceil", kDouble},
  };
  for (const ResizeCase& test : cases) {
    EXPECT_TRUE(testing::gradients_match_numeric(
        resize_model(test).bytes(), {tscope::testing::random_tensor(DType::Float64, test.in, 70)}))
        << test.mode << " " << test.transformation;
  }
}

}  // namespace
}  // namespace tscope::onnx
