// SPDX-License-Identifier: Apache-2.0
// Models that are invalid or too large to run are import errors naming the value at fault.
#include <onnx/onnx_pb.h>

#include <string>

#include "model_builder.h"
#include "support/test_util.h"
#include "tscope/onnx/import.h"

namespace tscope::onnx {
namespace {

using tscope::testing::contains;
using tscope::testing::error_of;

using testing::ModelBuilder;
constexpr int kFloat = ::onnx::TensorProto::FLOAT;
constexpr std::int64_t kTwoTo32 = std::int64_t{1} << 32;

Error import_error(const std::string& bytes, const ImportOptions& options = {}) {
  return error_of([&] { (void)import_model_bytes(bytes, "bad.onnx", options); });
}

TEST(OnnxImportSafety, InputOfTwoTo64ElementsIsRejected) {
  ModelBuilder model;
  model.input("x", kFloat, {kTwoTo32, kTwoTo32}).output("y", kFloat, {kTwoTo32, kTwoTo32});
  model.node("Softmax", {"x"}, {"y"}, "softmax");
  const Error error = import_error(model.bytes());
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(contains(error, "input 'x': the element count of shape (4294967296, 4294967296)"))
      << error.what();
  EXPECT_TRUE(contains(error, "while importing ONNX model 'bad.onnx'")) << error.what();
}

TEST(OnnxImportSafety, GivenDimsWhoseBytesOverflowAreRejected) {
  ModelBuilder model;
  model.input("x", kFloat, {"N", 4}).output("y", kFloat, {"N", 4});
  model.node("Softmax", {"x"}, {"y"}, "softmax");
  ImportOptions options;
  options.input_dims["x"] = Dims{std::int64_t{1} << 60, 4};
  const Error error = import_error(model.bytes(), options);
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(contains(error, "input 'x': shape (1152921504606846976, 4) of float32"))
      << error.what();
}

TEST(OnnxImportSafety, TwoNodesWritingOneValueIsAParseError) {
  ModelBuilder model;
  model.input("x", kFloat, {2}).output("y", kFloat, {2});
  model.node("Relu", {"x"}, {"y"}, "first");
  model.node("Neg", {"x"}, {"y"}, "second");
  const Error error = import_error(model.bytes());
  EXPECT_EQ(error.kind(), ErrorKind::Parse);
  EXPECT_TRUE(contains(error, "writes 'y', which an earlier node")) << error.what();
  EXPECT_TRUE(contains(error, "in node 1 'second'")) << error.what();
}

TEST(OnnxImportSafety, NodeWritingAGraphInputIsAParseError) {
  ModelBuilder model;
  model.input("x", kFloat, {2}).output("x", kFloat, {2});
  model.node("Relu", {"x"}, {"x"}, "in_place");
  EXPECT_EQ(import_error(model.bytes()).kind(), ErrorKind::Parse);
}

TEST(OnnxImportSafety, DimsForAnUnknownInputAreRejected) {
  ModelBuilder model;
  model.input("x", kFloat, {"N", 4}).output("y", kFloat, {"N", 4});
  model.node("Relu", {"x"}, {"y"});
  ImportOptions options;
  options.input_dims["x"] = Dims{2, 4};
  options.input_dims["nosuch"] = Dims{3};
  const Error error = import_error(model.bytes(), options);
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(contains(error, "dims (3,) are given for 'nosuch', which is not an input of the "
                              "model (inputs: 'x')"))
      << error.what();
}

}  // namespace
}  // namespace tscope::onnx
