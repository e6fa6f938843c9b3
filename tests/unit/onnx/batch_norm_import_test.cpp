// SPDX-License-Identifier: Apache-2.0
// ONNX BatchNormalization imports to the BatchNorm ops: inference values and node, opset 14+
// training mode with ONNX's running averages, and the refused pre-14 training outputs.
#include <onnx/onnx_pb.h>

#include <cmath>

#include "model_builder.h"
#include "support/test_util.h"
#include "tscope/onnx/import.h"

namespace tscope::onnx {
namespace {

using testing::ModelBuilder;
constexpr int kFloat = ::onnx::TensorProto::FLOAT;

const std::vector<float> kScale = {1.5f, 0.5f, 2.0f};
const std::vector<float> kBias = {0.0f, 1.0f, -1.0f};
const std::vector<float> kMean = {0.25f, -0.5f, 1.0f};
const std::vector<float> kVar = {1.0f, 4.0f, 0.25f};

// A (2, 3, 2, 2) input, the four parameters as initializers, BatchNormalization at `opset`.
ModelBuilder batch_norm_model(std::int64_t opset, const std::vector<std::string>& outputs) {
  ModelBuilder model(opset);
  model.input("x", kFloat, {2, 3, 2, 2});
  model.output(outputs[0], kFloat, {2, 3, 2, 2});
  for (std::size_t i = 1; i < outputs.size(); ++i) model.output(outputs[i], kFloat, {3});
  model.float_initializer("scale", {3}, kScale).float_initializer("bias", {3}, kBias);
  model.float_initializer("mean", {3}, kMean).float_initializer("var", {3}, kVar);
  model.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, outputs, "bn");
  return model;
}

std::int64_t channel_of(std::int64_t index) { return (index / 4) % 3; }

TEST(OnnxBatchNorm, InferenceIsOneBatchNormInferenceNode) {
  const ImportedModel model = import_model_bytes(batch_norm_model(15, {"y"}).bytes(), "bn.onnx");
  const ApplyNode* node = model.outputs[0].variable.owner();
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->op().name, "BatchNormInference");
  EXPECT_EQ(node->provenance().user_op, "onnx:BatchNormalization 'bn'");
  Function f = function(model.input_variables(), model.output_variables());
  const Tensor x = tscope::testing::random_tensor(DType::Float32, {2, 3, 2, 2}, 3, -2.0, 2.0);
  const Tensor y = f({x})[0];
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const auto c = static_cast<std::size_t>(channel_of(i));
    const double expected =
        (x.at(i) - kMean[c]) / std::sqrt(kVar[c] + 1e-5) * kScale[c] + kBias[c];
    EXPECT_NEAR(y.at(i), expected, 1e-5) << i;
  }
}

TEST(OnnxBatchNorm, TrainingModeUsesBatchStatisticsAndOnnxRunningAverages) {
  ModelBuilder builder = batch_norm_model(15, {"y", "running_mean", "running_var"});
  auto& node = *builder.proto().mutable_graph()->mutable_node(0);
  testing::add_int_attribute(node, "training_mode", 1);
  testing::add_float_attribute(node, "momentum", 0.75f);
  const ImportedModel model = import_model_bytes(builder.bytes(), "bn_train.onnx");
  Function f = function(model.input_variables(), model.output_variables());
  const Tensor x = tscope::testing::random_tensor(DType::Float32, {2, 3, 2, 2}, 4, -2.0, 3.0);
  const std::vector<Tensor> out = f({x});
  for (std::int64_t c = 0; c < 3; ++c) {
    double total = 0;
    double squares = 0;
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      if (channel_of(i) != c) continue;
      total += x.at(i);
      squares += x.at(i) * x.at(i);
    }
    const double mean = total / 8;
    const double var = squares / 8 - mean * mean;  // population variance, as ONNX defines it
    const auto ci = static_cast<std::size_t>(c);
    EXPECT_NEAR(out[1].at(c), kMean[ci] * 0.75 + mean * 0.25, 1e-5);
    EXPECT_NEAR(out[2].at(c), kVar[ci] * 0.75 + var * 0.25, 1e-5);
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      if (channel_of(i) != c) continue;
      const double expected = (x.at(i) - mean) / std::sqrt(var + 1e-5) * kScale[ci] + kBias[ci];
      EXPECT_NEAR(out[0].at(i), expected, 1e-4) << i;
    }
  }
}

TEST(OnnxBatchNorm, TrainingOutputsBeforeOpset14AreUnsupported) {
  try {
    (void)import_model_bytes(
        batch_norm_model(9, {"y", "mean_out", "var_out", "saved_mean", "saved_var"}).bytes(),
        "bn9.onnx");
    ADD_FAILURE() << "import succeeded";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
    EXPECT_NE(error.message().find("before opset 14"), std::string::npos) << error.what();
    EXPECT_NE(error.message().find("BatchNormalization"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace tscope::onnx
