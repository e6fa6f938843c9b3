// SPDX-License-Identifier: Apache-2.0
// ONNX Range with bounds computed in the graph imports as the ARange op (constant bounds still
// fold to a constant at import), and NonZero as the NonZero op: both have lengths known only when
// the model runs.
#include <onnx/onnx_pb.h>

#include "model_builder.h"
#include "support/test_util.h"
#include "tscope/graph/traversal.h"
#include "tscope/onnx/import.h"

namespace tscope::onnx {
namespace {

using testing::ModelBuilder;

bool has_op(const ImportedModel& model, std::string_view name) {
  for (const ApplyNode* node : ancestors_in_topological_order(model.output_variables())) {
    if (node->op().name == name) return true;
  }
  return false;
}

TEST(OnnxRange, BoundsFromTheGraphRunAsARange) {
  ModelBuilder builder;
  builder.input("start", ::onnx::TensorProto::INT64, {})
      .input("limit", ::onnx::TensorProto::INT64, {})
      .output("y", ::onnx::TensorProto::INT64, {"n"})
      .scalar_initializer("delta", ::onnx::TensorProto::INT64, 3);
  builder.node("Range", {"start", "limit", "delta"}, {"y"}, "range");
  const ImportedModel model = import_model_bytes(builder.bytes(), "range.onnx");
  EXPECT_TRUE(has_op(model, "ARange"));
  EXPECT_EQ(model.output_variables()[0].type(), (Type{DType::Int64, Dims{kUnknownDim}}));
  Function f = function(model.input_variables(), model.output_variables());
  const auto call = [&](std::int64_t start, std::int64_t limit) {
    return f({Tensor::from_vector<std::int64_t>({}, {start}),
              Tensor::from_vector<std::int64_t>({}, {limit})})[0]
        .to_doubles();
  };
  EXPECT_EQ(call(1, 10), (std::vector<double>{1, 4, 7}));
  EXPECT_EQ(call(-2, 2), (std::vector<double>{-2, 1}));
  EXPECT_EQ(call(5, 0), (std::vector<double>{}));
}

TEST(OnnxRange, FloatBoundsAndAZeroDeltaAtRunTime) {
  ModelBuilder builder;
  builder.input("start", ::onnx::TensorProto::FLOAT, {})
      .input("limit", ::onnx::TensorProto::FLOAT, {})
      .input("delta", ::onnx::TensorProto::FLOAT, {})
      .output("y", ::onnx::TensorProto::FLOAT, {"n"});
  builder.node("Range", {"start", "limit", "delta"}, {"y"}, "range");
  const ImportedModel model = import_model_bytes(builder.bytes(), "range_float.onnx");
  Function f = function(model.input_variables(), model.output_variables());
  const auto scalar = [](float value) { return Tensor::from_vector<float>({}, {value}); };
  const Tensor y = f({scalar(1.0f), scalar(-1.0f), scalar(-0.5f)})[0];
  EXPECT_EQ(y.dtype(), DType::Float32);
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{1.0, 0.5, 0.0, -0.5}));
  const Error zero = tscope::testing::error_of([&] {
    (void)f({scalar(0.0f), scalar(1.0f), scalar(0.0f)});
  });
  EXPECT_EQ(zero.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(tscope::testing::contains(zero, "ARange")) << zero.what();
  EXPECT_TRUE(tscope::testing::contains(zero, "range_float.onnx")) << zero.what();
}

TEST(OnnxRange, ConstantBoundsStillFoldToAConstant) {
  ModelBuilder builder;
  builder.output("y", ::onnx::TensorProto::INT64, {4})
      .scalar_initializer("start", ::onnx::TensorProto::INT64, 2)
      .scalar_initializer("limit", ::onnx::TensorProto::INT64, 10)
      .scalar_initializer("delta", ::onnx::TensorProto::INT64, 2);
  builder.node("Range", {"start", "limit", "delta"}, {"y"});
  ImportOptions options;
  options.initializers_as_constants = true;
  const ImportedModel model = import_model_bytes(builder.bytes(), "range_constant.onnx", options);
  EXPECT_FALSE(has_op(model, "ARange"));
  EXPECT_EQ(function({}, model.output_variables())({})[0].to_doubles(),
            (std::vector<double>{2, 4, 6, 8}));
}

TEST(OnnxNonZero, CoordinatesOfTheNonzeroElements) {
  ModelBuilder builder;
  builder.input("x", ::onnx::TensorProto::FLOAT, {2, "w"})
      .output("y", ::onnx::TensorProto::INT64, {2, "n"});
  builder.node("NonZero", {"x"}, {"y"});
  const ImportedModel model = import_model_bytes(builder.bytes(), "nonzero.onnx");
  Function f = function(model.input_variables(), model.output_variables());
  const Tensor y = f({Tensor::from_vector<float>({2, 3}, {0.f, 1.f, 2.f, 3.f, 0.f, 0.f})})[0];
  EXPECT_EQ(y.shape(), (Dims{2, 3}));
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{0, 0, 1, 1, 2, 0}));
}

}  // namespace
}  // namespace tscope::onnx
