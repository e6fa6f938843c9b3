// SPDX-License-Identifier: Apache-2.0
// ONNX Div on integers truncates toward zero (C, ONNX Runtime), where floor division differs for
// negative quotients; ONNX's backend tests use non-negative values only, so they cannot tell.
#include <onnx/onnx_pb.h>

#include "model_builder.h"
#include "support/test_util.h"
#include "tscope/onnx/import.h"

namespace tscope::onnx {
namespace {

using testing::ModelBuilder;

template <class T>
void expect_truncating_division(int onnx_type, DType dtype) {
  ModelBuilder builder;
  builder.input("a", onnx_type, {6}).input("b", onnx_type, {6}).output("q", onnx_type, {6});
  builder.node("Div", {"a", "b"}, {"q"});
  const ImportedModel model = import_model_bytes(builder.bytes(), "div.onnx");
  Function f = function(model.input_variables(), model.output_variables());
  const Tensor a = Tensor::from_vector<T>({6}, {7, -7, 7, -7, -6, 0});
  const Tensor b = Tensor::from_vector<T>({6}, {2, 2, -2, -2, 3, -5});
  const Tensor q = f({a, b})[0];
  ASSERT_EQ(q.dtype(), dtype);
  const double expected[] = {3, -3, -3, 3, -2, 0};
  for (std::int64_t i = 0; i < 6; ++i) EXPECT_EQ(q.at(i), expected[i]) << "element " << i;
}

TEST(OnnxDiv, IntegerDivisionTruncatesTowardZeroInt32) {
  expect_truncating_division<std::int32_t>(::onnx::TensorProto::INT32, DType::Int32);
}

TEST(OnnxDiv, IntegerDivisionTruncatesTowardZeroInt64) {
  expect_truncating_division<std::int64_t>(::onnx::TensorProto::INT64, DType::Int64);
}

TEST(OnnxDiv, IntegerDivisionTruncatesTowardZeroInt8) {
  expect_truncating_division<std::int8_t>(::onnx::TensorProto::INT8, DType::Int8);
}

TEST(OnnxDiv, UnsignedDivisionIsPlainDivision) {
  ModelBuilder builder;
  builder.input("a", ::onnx::TensorProto::UINT8, {3}).input("b", ::onnx::TensorProto::UINT8, {3});
  builder.output("q", ::onnx::TensorProto::UINT8, {3});
  builder.node("Div", {"a", "b"}, {"q"});
  const ImportedModel model = import_model_bytes(builder.bytes(), "div_u8.onnx");
  Function f = function(model.input_variables(), model.output_variables());
  const Tensor q = f({Tensor::from_vector<std::uint8_t>({3}, {200, 7, 0}),
                      Tensor::from_vector<std::uint8_t>({3}, {3, 7, 9})})[0];
  EXPECT_EQ(q.at(0), 66);
  EXPECT_EQ(q.at(1), 1);
  EXPECT_EQ(q.at(2), 0);
}

TEST(OnnxDiv, FloatDivisionIsTrueDivision) {
  ModelBuilder builder;
  builder.input("a", ::onnx::TensorProto::FLOAT, {2}).input("b", ::onnx::TensorProto::FLOAT, {2});
  builder.output("q", ::onnx::TensorProto::FLOAT, {2});
  builder.node("Div", {"a", "b"}, {"q"});
  const ImportedModel model = import_model_bytes(builder.bytes(), "div_f32.onnx");
  Function f = function(model.input_variables(), model.output_variables());
  const Tensor q = f({Tensor::from_vector<float>({2}, {-7.0f, 1.0f}),
                      Tensor::from_vector<float>({2}, {2.0f, 4.0f})})[0];
  EXPECT_EQ(q.at(0), -3.5);
  EXPECT_EQ(q.at(1), 0.25);
}

}  // namespace
}  // namespace tscope::onnx
