// SPDX-License-Identifier: Apache-2.0
// ONNX Dropout imports as the identity: in inference mode, and in training mode when its ratio
// is a constant 0 (what an exporter writes for a dropout called without its training flag).
// Training mode with any other ratio would draw random masks and is refused, naming the ratio.
#include <onnx/onnx_pb.h>

#include "model_builder.h"
#include "support/test_util.h"
#include "tscope/onnx/import.h"

namespace tscope::onnx {
namespace {

using testing::ModelBuilder;

// Dropout(x, ratio, training_mode) -> (y, mask); `ratio` < 0 leaves the ratio input out.
std::string dropout_model(double ratio, bool training) {
  ModelBuilder builder;
  builder.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
  builder.output("y", ::onnx::TensorProto::FLOAT, {2, 3});
  builder.output("mask", ::onnx::TensorProto::BOOL, {2, 3});
  builder.scalar_initializer("training", ::onnx::TensorProto::BOOL, training ? 1.0 : 0.0);
  if (ratio >= 0) builder.scalar_initializer("ratio", ::onnx::TensorProto::FLOAT, ratio);
  builder.node("Dropout", {"x", ratio >= 0 ? "ratio" : "", "training"}, {"y", "mask"});
  return builder.bytes();
}

void expect_identity(const std::string& bytes) {
  const ImportedModel model = import_model_bytes(bytes, "dropout.onnx");
  Function f = function(model.input_variables(), model.output_variables());
  const Tensor x = tscope::testing::random_tensor(DType::Float32, {2, 3}, 1);
  const std::vector<Tensor> out = f({x});
  EXPECT_EQ(out[0].to_doubles(), x.to_doubles());
  EXPECT_EQ(out[1].to_doubles(), std::vector<double>(6, 1.0));
}

std::string unsupported_message(const std::string& bytes) {
  try {
    (void)import_model_bytes(bytes, "dropout.onnx");
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
    return error.what();
  }
  ADD_FAILURE() << "import succeeded";
  return "";
}

TEST(OnnxDropout, InferenceModeIsTheIdentity) { expect_identity(dropout_model(0.3, false)); }

TEST(OnnxDropout, TrainingModeWithRatioZeroIsTheIdentity) {
  expect_identity(dropout_model(0.0, true));
}

TEST(OnnxDropout, TrainingModeWithAnotherRatioIsRefusedNamingIt) {
  EXPECT_NE(unsupported_message(dropout_model(0.3, true)).find("ratio 0.3"), std::string::npos);
  // Without the ratio input, ONNX's default 0.5.
  EXPECT_NE(unsupported_message(dropout_model(-1, true)).find("ratio 0.5"), std::string::npos);
}

}  // namespace
}  // namespace tscope::onnx
