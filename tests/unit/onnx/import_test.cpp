// SPDX-License-Identifier: Apache-2.0
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "model_builder.h"
#include "support/test_util.h"
#include "tscope/graph/traversal.h"
#include "tscope/onnx/import.h"
#include "tscope/profile/report_text.h"

namespace tscope::onnx {
namespace {

using testing::ModelBuilder;
constexpr int kFloat = ::onnx::TensorProto::FLOAT;
constexpr int kInt64 = ::onnx::TensorProto::INT64;

/// y = Relu(x + b) on a (batch, 3) input with a symbolic batch dim.
ModelBuilder add_relu_model() {
  ModelBuilder model;
  model.input("x", kFloat, {"batch", 3}).output("y", kFloat, {"batch", 3});
  model.float_initializer("b", {3}, {-1.0f, 0.0f, 1.0f});
  model.node("Add", {"x", "b"}, {"sum"}, "add_bias");
  model.node("Relu", {"sum"}, {"y"}, "relu1");
  return model;
}

Error import_error(const std::string& bytes, const ImportOptions& options = {}) {
  try {
    (void)import_model_bytes(bytes, "bad.onnx", options);
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "import succeeded";
  return Error(ErrorKind::Internal, "no error");
}

TEST(OnnxImport, RunsAModelWithASymbolicBatchDim) {
  const ImportedModel model = import_model_bytes(add_relu_model().bytes(), "add_relu.onnx");
  ASSERT_EQ(model.inputs.size(), 1u);
  EXPECT_EQ(model.inputs[0].name, "x");
  EXPECT_EQ(model.inputs[0].variable.type().dims, (Dims{kUnknownDim, 3}));
  ASSERT_EQ(model.outputs.size(), 1u);
  EXPECT_EQ(model.outputs[0].variable.name(), "y");
  EXPECT_EQ(model.opset, 13);
  EXPECT_EQ(model.node_count, 2);
  ASSERT_EQ(model.initializers.size(), 1u);
  EXPECT_EQ(model.initializers[0].variable.kind(), VariableKind::Shared);
  Function f = function(model.input_variables(), model.output_variables());
  for (std::int64_t batch : {1, 4}) {
    std::vector<float> values;
    for (std::int64_t i = 0; i < batch * 3; ++i) values.push_back(static_cast<float>(i % 5) - 2.0f);
    const Tensor x = Tensor::from_vector<float>({batch, 3}, values);
    const Tensor y = f({x})[0];
    ASSERT_EQ(y.shape(), (Dims{batch, 3}));
    const float bias[3] = {-1.0f, 0.0f, 1.0f};
    for (std::int64_t i = 0; i < batch * 3; ++i) {
      EXPECT_EQ(y.at(i), std::max(0.0, static_cast<double>(values[static_cast<std::size_t>(i)] + bias[i % 3])));
    }
  }
}

TEST(OnnxImport, NodesPointAtTheModelNodeTheyCameFrom) {
  const ImportedModel model = import_model_bytes(add_relu_model().bytes(), "dir/add_relu.onnx");
  const ApplyNode* relu = model.outputs[0].variable.owner();
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->provenance().site.short_string(), "add_relu.onnx:2");
  EXPECT_EQ(relu->provenance().site.function, "relu1");
  EXPECT_EQ(relu->provenance().user_op, "onnx:Relu 'relu1'");
  // Apply names read like the model: the inputs carry ONNX value names.
  EXPECT_NE(relu->to_string().find("sum"), std::string::npos) << relu->to_string();
}

TEST(OnnxImport, ProfileApplyRowsNameTheModelNode) {
  const ImportedModel model = import_model_bytes(add_relu_model().bytes(), "add_relu.onnx");
  FunctionOptions options;
  options.profile = true;
  options.excluded_rewrites = {"fuse_elementwise"};  // one row per model node
  Function f = function(model.input_variables(), model.output_variables(), {}, options);
  (void)f({Tensor::zeros(DType::Float32, {2, 3})});
  const std::string report = profile::render_text(f.collector()->snapshot());
  EXPECT_NE(report.find("<- onnx:Relu 'relu1' at add_relu.onnx:2"), std::string::npos) << report;
  EXPECT_NE(report.find("<- onnx:Add 'add_bias' at add_relu.onnx:1"), std::string::npos) << report;
}

TEST(OnnxImport, FusedProfileRowsNameEveryModelNode) {
  // fuse_elementwise makes the add and the relu one Composite: its row names both model nodes,
  // the last one's site first.
  const ImportedModel model = import_model_bytes(add_relu_model().bytes(), "add_relu.onnx");
  FunctionOptions options;
  options.profile = true;
  Function f = function(model.input_variables(), model.output_variables(), {}, options);
  (void)f({Tensor::zeros(DType::Float32, {2, 3})});
  const std::string report = profile::render_text(f.collector()->snapshot());
  EXPECT_NE(report.find("<- onnx:Relu 'relu1' + onnx:Add 'add_bias' at add_relu.onnx:2"),
            std::string::npos)
      << report;
}

TEST(OnnxImport, InitializersMayBecomeConstants) {
  ImportOptions options;
  options.initializers_as_constants = true;
  const ImportedModel model = import_model_bytes(add_relu_model().bytes(), "m.onnx", options);
  EXPECT_EQ(model.initializers[0].variable.kind(), VariableKind::Constant);
}

TEST(OnnxImport, GivenInputDimsReplaceSymbolicOnes) {
  ImportOptions options;
  options.input_dims["x"] = Dims{8, 3};
  const ImportedModel model = import_model_bytes(add_relu_model().bytes(), "m.onnx", options);
  EXPECT_EQ(model.inputs[0].variable.type().dims, (Dims{8, 3}));
  options.input_dims["x"] = Dims{8, 4};
  EXPECT_EQ(import_error(add_relu_model().bytes(), options).kind(), ErrorKind::ShapeMismatch);
}

TEST(OnnxImport, InputValuesBindGraphInputsAsConstants) {
  // Expand(x, shape) with shape a graph input: the converter needs it at import time.
  ModelBuilder model;
  model.input("x", kFloat, {3, 1}).input("shape", kInt64, {2}).output("y", kFloat, {3, 4});
  model.node("Expand", {"x", "shape"}, {"y"});
  EXPECT_EQ(import_error(model.bytes()).kind(), ErrorKind::Unsupported);
  ImportOptions options;
  options.input_values["shape"] = Tensor::from_vector<std::int64_t>({2}, {3, 4});
  const ImportedModel imported = import_model_bytes(model.bytes(), "expand.onnx", options);
  ASSERT_EQ(imported.inputs.size(), 1u);  // the bound input is no input any more
  EXPECT_EQ(imported.inputs[0].name, "x");
  EXPECT_EQ(imported.outputs[0].variable.type().dims, (Dims{3, 4}));
  // A value of another dtype than the declared one is refused, naming the input.
  options.input_values["shape"] = Tensor::from_vector<float>({2}, {3, 4});
  const Error mismatch = import_error(model.bytes(), options);
  EXPECT_EQ(mismatch.kind(), ErrorKind::InvalidArgument);
  EXPECT_NE(std::string(mismatch.what()).find("graph input 'shape' is declared int64 but its value is float32"),
            std::string::npos)
      << mismatch.what();
}

TEST(OnnxImport, ShapeArithmeticOnKnownDimsFoldsToConstants) {
  // Reshape(x, Concat(Gather(Shape(x), 0), [-1])): the exporters' flatten idiom.
  ModelBuilder model;
  model.input("x", kFloat, {2, 3, 4}).output("y", kFloat, {2, 12});
  model.int64_initializer("zero", {0});
  model.int64_initializer("minus_one", {-1});
  model.node("Shape", {"x"}, {"shape"});
  model.node("Gather", {"shape", "zero"}, {"batch"});
  model.node("Concat", {"batch", "minus_one"}, {"target"}).add_attribute()->CopyFrom([] {
    ::onnx::AttributeProto axis;
    axis.set_name("axis");
    axis.set_type(::onnx::AttributeProto::INT);
    axis.set_i(0);
    return axis;
  }());
  model.node("Reshape", {"x", "target"}, {"y"});
  ImportOptions options;
  options.initializers_as_constants = true;
  const ImportedModel imported = import_model_bytes(model.bytes(), "flatten.onnx", options);
  const std::vector<ApplyNode*> nodes = ancestors_in_topological_order(imported.output_variables());
  ASSERT_EQ(nodes.size(), 1u) << "only the Reshape should remain: " << nodes[0]->to_string();
  EXPECT_EQ(nodes[0]->op().name, "Reshape");
  EXPECT_EQ(imported.outputs[0].variable.type().dims, (Dims{2, 12}));
}

TEST(OnnxImport, TruncatedOrCorruptFilesAreParseErrors) {
  const std::string bytes = add_relu_model().bytes();
  const Error truncated = import_error(bytes.substr(0, bytes.size() / 2));
  EXPECT_EQ(truncated.kind(), ErrorKind::Parse);
  EXPECT_NE(std::string(truncated.what()).find("bad.onnx"), std::string::npos) << truncated.what();
  EXPECT_EQ(import_error("this is not a protobuf message at all").kind(), ErrorKind::Parse);
  EXPECT_EQ(import_error("").kind(), ErrorKind::Parse);
}

TEST(OnnxImport, UnknownOpNamesTheNodeAndOpType) {
  ModelBuilder model;
  model.input("x", kFloat, {2}).output("y", kFloat, {2});
  model.node("Frobnicate", {"x"}, {"y"}, "mystery");
  const Error error = import_error(model.bytes());
  EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
  const std::string text = error.what();
  EXPECT_NE(text.find("Frobnicate"), std::string::npos) << text;
  EXPECT_NE(text.find("'mystery'"), std::string::npos) << text;
  EXPECT_NE(text.find("bad.onnx"), std::string::npos) << text;
}

TEST(OnnxImport, UnknownAttributeIsRejected) {
  ModelBuilder model;
  model.input("x", kFloat, {2}).output("y", kFloat, {2});
  testing::add_int_attribute(model.node("Relu", {"x"}, {"y"}, "r"), "slope_hint", 3);
  const Error error = import_error(model.bytes());
  EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
  EXPECT_NE(std::string(error.what()).find("slope_hint"), std::string::npos) << error.what();
}

TEST(OnnxImport, OpsetOutOfRangeIsUnsupported) {
  ModelBuilder model(kMaxOpset + 1);
  model.input("x", kFloat, {2}).output("y", kFloat, {2});
  model.node("Relu", {"x"}, {"y"});
  const Error error = import_error(model.bytes());
  EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
  EXPECT_NE(std::string(error.what()).find("opset"), std::string::npos) << error.what();
}

TEST(OnnxImport, DanglingInputIsAParseError) {
  ModelBuilder model;
  model.input("x", kFloat, {2}).output("y", kFloat, {2});
  model.node("Add", {"x", "nowhere"}, {"y"}, "adder");
  const Error error = import_error(model.bytes());
  EXPECT_EQ(error.kind(), ErrorKind::Parse);
  EXPECT_NE(std::string(error.what()).find("'nowhere'"), std::string::npos) << error.what();
}

TEST(OnnxImport, UnsupportedDataTypeNamesTheValue) {
  ModelBuilder model;
  model.input("half", ::onnx::TensorProto::FLOAT16, {2}).output("y", kFloat, {2});
  model.node("Relu", {"half"}, {"y"});
  const Error error = import_error(model.bytes());
  EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
  EXPECT_NE(std::string(error.what()).find("'half'"), std::string::npos) << error.what();
}

TEST(OnnxImport, InitializerWithTooFewValuesIsAParseError) {
  ModelBuilder model = add_relu_model();
  model.proto().mutable_graph()->mutable_initializer(0)->add_dims(2);  // now (3, 2): 6 values
  const Error error = import_error(model.bytes());
  EXPECT_EQ(error.kind(), ErrorKind::Parse);
  EXPECT_NE(std::string(error.what()).find("'b'"), std::string::npos) << error.what();
}

TEST(OnnxImport, DataThatContradictsDeclaredDimsIsRejectedAtCallTime) {
  const ImportedModel model = import_model_bytes(add_relu_model().bytes(), "m.onnx");
  Function f = function(model.input_variables(), model.output_variables());
  try {
    (void)f({Tensor::zeros(DType::Float32, {2, 4})});
    FAIL() << "expected ShapeMismatch";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(error.what()).find("'x'"), std::string::npos) << error.what();
  }
}

TEST(OnnxImport, MissingFileIsAnIoError) {
  try {
    (void)import_model("/nonexistent/model.onnx");
    FAIL() << "expected Io";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Io);
  }
}

TEST(OnnxImport, MatMulOfStackedMatricesKeepsTheSymbolicBatch) {
  ModelBuilder model;
  model.input("a", kFloat, {"n", 2, 3}).output("c", kFloat, {"n", 2, 4});
  std::vector<float> weights;
  for (int i = 0; i < 12; ++i) weights.push_back(static_cast<float>(i) * 0.5f);
  model.float_initializer("w", {3, 4}, weights);
  model.node("MatMul", {"a", "w"}, {"c"});
  const ImportedModel imported = import_model_bytes(model.bytes(), "matmul.onnx");
  Function f = function(imported.input_variables(), imported.output_variables());
  const Tensor a = tscope::testing::random_tensor(DType::Float32, {5, 2, 3}, 3);
  const Tensor c = f({a})[0];
  ASSERT_EQ(c.shape(), (Dims{5, 2, 4}));
  for (std::int64_t b = 0; b < 5; ++b) {
    for (std::int64_t i = 0; i < 2; ++i) {
      for (std::int64_t j = 0; j < 4; ++j) {
        double expected = 0;
        for (std::int64_t k = 0; k < 3; ++k) expected += a.at((b * 2 + i) * 3 + k) * weights[static_cast<std::size_t>(k * 4 + j)];
        EXPECT_NEAR(c.at((b * 2 + i) * 4 + j), expected, 1e-4);
      }
    }
  }
}

TEST(OnnxImport, CumSumInAllFourModes) {
  for (int mode = 0; mode < 4; ++mode) {
    const bool exclusive = (mode & 1) != 0;
    const bool reverse = (mode & 2) != 0;
    ModelBuilder model;
    model.input("x", kFloat, {2, 4}).output("y", kFloat, {2, 4});
    model.int64_initializer("axis", {1});
    auto& node = model.node("CumSum", {"x", "axis"}, {"y"});
    testing::add_int_attribute(node, "exclusive", exclusive ? 1 : 0);
    testing::add_int_attribute(node, "reverse", reverse ? 1 : 0);
    const ImportedModel imported = import_model_bytes(model.bytes(), "cumsum.onnx");
    Function f = function(imported.input_variables(), imported.output_variables());
    const Tensor x = Tensor::from_vector<float>({2, 4}, {1, 2, 3, 4, -1, 5, 0, 2});
    const Tensor y = f({x})[0];
    for (std::int64_t row = 0; row < 2; ++row) {
      for (std::int64_t j = 0; j < 4; ++j) {
        double expected = 0;
        for (std::int64_t i = 0; i < 4; ++i) {
          const bool take = reverse ? (exclusive ? i > j : i >= j) : (exclusive ? i < j : i <= j);
          if (take) expected += x.at(row * 4 + i);
        }
        EXPECT_EQ(y.at(row * 4 + j), expected) << "mode " << mode << " at " << row << "," << j;
      }
    }
  }
}

TEST(OnnxImport, TopKGivesSortedValuesAndFirstIndicesOnTies) {
  for (const bool largest : {true, false}) {
    ModelBuilder model;
    model.input("x", kFloat, {2, 5}).output("values", kFloat, {2, 3}).output("indices", kInt64, {2, 3});
    model.int64_initializer("k", {3});
    testing::add_int_attribute(model.node("TopK", {"x", "k"}, {"values", "indices"}), "largest",
                               largest ? 1 : 0);
    const ImportedModel imported = import_model_bytes(model.bytes(), "topk.onnx");
    Function f = function(imported.input_variables(), imported.output_variables());
    const auto out = f({Tensor::from_vector<float>({2, 5}, {3, 1, 4, 1, 5, 2, 7, 1, 8, 2})});
    if (largest) {
      EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{5, 4, 3, 8, 7, 2}));
      EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{4, 2, 0, 3, 1, 0}));
    } else {
      EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{1, 1, 3, 1, 2, 2}));
      EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{1, 3, 0, 2, 0, 4}));
    }
  }
}

TEST(OnnxImport, HugeShapeArgumentsAreErrorsNotExhaustedMemory) {
  // Found by fuzzing: repeats or extents near 2^31 must not be materialised at import.
  ModelBuilder tile;
  tile.input("x", kFloat, {2}).output("y", kFloat, {"n"});
  tile.int64_initializer("repeats", {std::int64_t{1} << 27});
  tile.node("Tile", {"x", "repeats"}, {"y"}, "tile");
  EXPECT_EQ(import_error(tile.bytes()).kind(), ErrorKind::Unsupported);
  ModelBuilder fill;
  fill.output("y", kFloat, {"n"});
  fill.int64_initializer("shape", {std::int64_t{1} << 40});
  fill.node("ConstantOfShape", {"shape"}, {"y"}, "fill");
  EXPECT_EQ(import_error(fill.bytes()).kind(), ErrorKind::InvalidArgument);
}

TEST(OnnxImport, NonPositiveStridesAreErrorsNamingTheAttribute) {
  // Found by fuzzing: MaxPool with ceil_mode=1 divided by a zero stride while computing pads.
  for (const char* op : {"MaxPool", "Conv"}) {
    ModelBuilder model;
    model.input("x", kFloat, {1, 1, 5, 5}).output("y", kFloat, {1, 1, "h", "w"});
    std::vector<std::string> inputs = {"x"};
    if (std::string(op) == "Conv") {
      model.float_initializer("w", {1, 1, 2, 2}, {1, 1, 1, 1});
      inputs.push_back("w");
    }
    auto& node = model.node(op, inputs, {"y"}, "window");
    testing::add_ints_attribute(node, "kernel_shape", {2, 2});
    testing::add_ints_attribute(node, "strides", {1, 0});
    if (std::string(op) == "MaxPool") testing::add_int_attribute(node, "ceil_mode", 1);
    const Error error = import_error(model.bytes());
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument) << op;
    EXPECT_NE(error.message().find("'strides' (1, 0) must be positive"), std::string::npos)
        << error.what();
  }
}

TEST(OnnxImport, ReadsTensorFiles) {
  ::onnx::TensorProto proto;
  proto.set_name("t");
  proto.set_data_type(kInt64);
  proto.add_dims(3);
  for (std::int64_t value : {4, -5, 6}) proto.add_int64_data(value);
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "tscope_tensor_test.pb";
  {
    std::ofstream stream(path, std::ios::binary);
    stream << proto.SerializeAsString();
  }
  const Tensor value = read_tensor_file(path);
  EXPECT_EQ(value.dtype(), DType::Int64);
  EXPECT_EQ(value.to_doubles(), (std::vector<double>{4, -5, 6}));
  std::filesystem::remove(path);
}

TEST(OnnxImport, SupportedOpTypesComeFromTheTable) {
  const std::vector<std::string> types = supported_op_types();
  EXPECT_TRUE(std::is_sorted(types.begin(), types.end()));
  for (const char* expected : {"Add", "Gemm", "MatMul", "Reshape", "Softmax", "Transpose"}) {
    EXPECT_NE(std::find(types.begin(), types.end(), expected), types.end()) << expected;
  }
}

}  // namespace
}  // namespace tscope::onnx
