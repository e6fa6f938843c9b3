// SPDX-License-Identifier: Apache-2.0
// ImportOptions::trainable: which initializers become parameters, BatchNormalization's batch
// statistics and running-average updates, active Dropout, and the refused option combination.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model_builder.h"
#include "support/test_util.h"
#include "training_models.h"
#include "tscope/onnx/import.h"

namespace tscope::onnx {
namespace {

using testing::ModelBuilder;
constexpr int kFloat = ::onnx::TensorProto::FLOAT;

ImportOptions trainable_options(std::uint64_t seed = 0) {
  ImportOptions options;
  options.trainable = true;
  options.random_seed = seed;
  return options;
}

std::vector<std::string> names_of(const std::vector<NamedVariable>& variables) {
  std::vector<std::string> names;
  for (const NamedVariable& variable : variables) names.push_back(variable.name);
  return names;
}

const Variable& initializer(const ImportedModel& model, const std::string& name) {
  for (const NamedVariable& entry : model.initializers) {
    if (entry.name == name) return entry.variable;
  }
  throw Error(ErrorKind::Internal, "no initializer " + name);
}

TEST(OnnxTrainableImport, ParametersAreTheFloatWeightsButNotRunningAverages) {
  const ImportedModel model =
      import_model_bytes(testing::conv_bn_gemm_model().bytes(), "cnn.onnx", trainable_options());
  EXPECT_EQ(names_of(model.parameters),
            (std::vector<std::string>{"conv.weight", "conv.bias", "bn.weight", "bn.bias",
                                      "fc.weight", "fc.bias"}));
  for (const NamedVariable& parameter : model.parameters) {
    EXPECT_EQ(parameter.variable.kind(), VariableKind::Shared) << parameter.name;
  }
  EXPECT_EQ(initializer(model, "bn.running_mean").kind(), VariableKind::Shared);
  EXPECT_EQ(initializer(model, "bn.running_var").kind(), VariableKind::Shared);
  // The Reshape's shape stays a constant, so the reshape's output shape is known at import.
  EXPECT_EQ(initializer(model, "flat_shape").kind(), VariableKind::Constant);
  EXPECT_EQ(model.outputs[0].variable.type().dims, (Dims{4, 3}));
  ASSERT_EQ(model.updates.size(), 2u);
  EXPECT_EQ(model.updates[0].shared.name(), "bn.running_mean");
  EXPECT_EQ(model.updates[1].shared.name(), "bn.running_var");
}

TEST(OnnxTrainableImport, FloatInitializersReadOnlyAtImportStayConstants) {
  // Resize's float scales are read when the model is imported; a rank-0 float (Clip's bound) is
  // an operand, not a weight.
  ModelBuilder builder(13);
  builder.input("x", kFloat, {1, 1, 2, 2}).output("y", kFloat, {1, 1, 4, 4});
  builder.float_initializer("scales", {4}, {1.0f, 1.0f, 2.0f, 2.0f});
  builder.float_initializer("w", {1, 1, 4, 4}, std::vector<float>(16, 0.5f));
  builder.scalar_initializer("low", kFloat, 0.0);
  ::onnx::NodeProto& resize = builder.node("Resize", {"x", "", "scales"}, {"big"}, "resize");
  testing::add_string_attribute(resize, "mode", "nearest");
  builder.node("Mul", {"big", "w"}, {"scaled"}, "mul");
  builder.node("Clip", {"scaled", "low"}, {"y"}, "clip");
  const ImportedModel model =
      import_model_bytes(builder.bytes(), "resize.onnx", trainable_options());
  EXPECT_EQ(names_of(model.parameters), (std::vector<std::string>{"w"}));
  EXPECT_EQ(initializer(model, "scales").kind(), VariableKind::Constant);
  EXPECT_EQ(initializer(model, "low").kind(), VariableKind::Constant);
  EXPECT_TRUE(model.updates.empty());
}

TEST(OnnxTrainableImport, BatchNormUsesBatchStatisticsAndUpdatesRunningAverages) {
  ModelBuilder builder(13);
  builder.input("x", kFloat, {4, 3, 2, 2}).output("y", kFloat, {4, 3, 2, 2});
  builder.float_initializer("scale", {3}, {1.0f, 2.0f, 0.5f});
  builder.float_initializer("bias", {3}, {0.0f, 1.0f, -1.0f});
  builder.float_initializer("mean", {3}, {0.5f, -0.5f, 1.0f});
  builder.float_initializer("var", {3}, {1.0f, 4.0f, 2.0f});
  ::onnx::NodeProto& bn =
      builder.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "bn");
  testing::add_float_attribute(bn, "momentum", 0.8f);
  const ImportedModel model = import_model_bytes(builder.bytes(), "bn.onnx", trainable_options());
  EXPECT_EQ(names_of(model.parameters), (std::vector<std::string>{"scale", "bias"}));
  Function f = function(model.input_variables(), model.output_variables(), model.updates);
  const Tensor x = tscope::testing::random_tensor(DType::Float32, {4, 3, 2, 2}, 5, -2.0, 3.0);
  const Tensor y = f({x})[0];
  const std::vector<double> scale = {1.0, 2.0, 0.5};
  const std::vector<double> bias = {0.0, 1.0, -1.0};
  const std::vector<double> old_mean = {0.5, -0.5, 1.0};
  const std::vector<double> old_var = {1.0, 4.0, 2.0};
  const Tensor new_mean = initializer(model, "mean").get_value();
  const Tensor new_var = initializer(model, "var").get_value();
  for (std::int64_t c = 0; c < 3; ++c) {
    double total = 0;
    double squares = 0;
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      if ((i / 4) % 3 != c) continue;
      total += x.at(i);
      squares += x.at(i) * x.at(i);
    }
    const double mean = total / 16;
    const double population_var = squares / 16 - mean * mean;
    const auto k = static_cast<std::size_t>(c);
    // ONNX's momentum weighs the running average; the variance update is the unbiased one.
    EXPECT_NEAR(new_mean.at(c), 0.8 * old_mean[k] + 0.2 * mean, 1e-5);
    EXPECT_NEAR(new_var.at(c), 0.8 * old_var[k] + 0.2 * population_var * 16.0 / 15.0, 1e-5);
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      if ((i / 4) % 3 != c) continue;
      const double expected =
          (x.at(i) - mean) / std::sqrt(population_var + 1e-5) * scale[k] + bias[k];
      EXPECT_NEAR(y.at(i), expected, 1e-4) << i;
    }
  }
}

// Dropout(x, ratio 0.25) -> (y, mask) at opset 13.
std::string dropout_model() {
  ModelBuilder builder(13);
  builder.input("x", kFloat, {4, 500}).output("y", kFloat, {4, 500});
  builder.output("mask", ::onnx::TensorProto::BOOL, {4, 500});
  builder.scalar_initializer("ratio", kFloat, 0.25);
  builder.node("Dropout", {"x", "ratio"}, {"y", "mask"}, "drop");
  return builder.bytes();
}

TEST(OnnxTrainableImport, DropoutDrawsMasksWithItsRatio) {
  const ImportedModel model =
      import_model_bytes(dropout_model(), "dropout.onnx", trainable_options(7));
  EXPECT_EQ(model.outputs[0].variable.owner()->provenance().user_op, "onnx:Dropout 'drop'");
  ASSERT_FALSE(model.updates.empty());  // the random state advances after each call
  Function f = function(model.input_variables(), model.output_variables(), model.updates);
  const Tensor x = Tensor::full(DType::Float32, {4, 500}, 1.0);
  const std::vector<Tensor> first = f({x});
  const std::vector<Tensor> second = f({x});
  std::int64_t dropped = 0;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const double value = first[0].at(i);
    EXPECT_TRUE(value == 0.0 || std::abs(value - 1.0 / 0.75) < 1e-6) << value;
    EXPECT_EQ(first[1].at(i) != 0.0, value != 0.0) << i;
    if (value == 0.0) ++dropped;
  }
  EXPECT_NEAR(static_cast<double>(dropped) / 2000.0, 0.25, 0.04);
  EXPECT_NE(first[0].to_doubles(), second[0].to_doubles());
}

TEST(OnnxTrainableImport, RefusesInitializersAsConstantsToo) {
  ImportOptions options = trainable_options();
  options.initializers_as_constants = true;
  try {
    (void)import_model_bytes(testing::conv_bn_gemm_model().bytes(), "cnn.onnx", options);
    ADD_FAILURE() << "import succeeded";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(error.what()).find("initializers_as_constants"), std::string::npos)
        << error.what();
  }
}

TEST(OnnxTrainableImport, InferenceImportHasNoParametersOrUpdates) {
  const ImportedModel model = import_model_bytes(testing::conv_bn_gemm_model().bytes(), "cnn.onnx");
  EXPECT_TRUE(model.parameters.empty());
  EXPECT_TRUE(model.updates.empty());
  EXPECT_EQ(model.outputs[0].variable.owner()->provenance().user_op, "onnx:Gemm 'fc'");
}

}  // namespace
}  // namespace tscope::onnx
