// SPDX-License-Identifier: Apache-2.0
// ONNX If: both branches evaluated and selected by the condition; a condition known at import
// picks its branch alone; branches whose outputs differ in shape are Unsupported.
#include <onnx/onnx_pb.h>

#include <vector>

#include "model_builder.h"
#include "support/test_util.h"
#include "tscope/onnx/import.h"

namespace tscope::onnx {
namespace {

using testing::GraphBuilder;
using testing::ModelBuilder;
constexpr int kFloat = ::onnx::TensorProto::FLOAT;
constexpr int kBool = ::onnx::TensorProto::BOOL;

Tensor floats(const Dims& shape, const std::vector<float>& values) {
  return Tensor::from_vector<float>(shape, values);
}

// then: x + 1; else: x * x, or a (2,) constant when `else_of_other_shape`.
ModelBuilder if_model(const std::string& condition, bool else_of_other_shape) {
  ModelBuilder model(13);
  model.input("x", kFloat, {3}).output("y", kFloat, {});
  model.float_initializer("one", {1}, {1.0f});
  model.float_initializer("pair", {2}, {7.0f, 8.0f});
  GraphBuilder then_branch("then_body");
  then_branch.node("Add", {"x", "one"}, {"then_out"});
  then_branch.output("then_out");
  GraphBuilder else_branch("else_body");
  if (else_of_other_shape) {
    else_branch.node("Identity", {"pair"}, {"else_out"});
  } else {
    else_branch.node("Mul", {"x", "x"}, {"else_out"});
  }
  else_branch.output("else_out");
  auto& node = model.node("If", {condition}, {"y"}, "choose");
  testing::add_graph_attribute(node, "then_branch", then_branch);
  testing::add_graph_attribute(node, "else_branch", else_branch);
  return model;
}

TEST(OnnxIf, SelectsTheBranchOfTheConditionAtRunTime) {
  ModelBuilder model = if_model("c", false);
  model.input("c", kBool, {});
  const ImportedModel imported = import_model_bytes(model.bytes(), "if.onnx");
  Function f = function(imported.input_variables(), imported.output_variables());
  const Tensor x = floats({3}, {1, -2, 3});
  EXPECT_TRUE(tscope::testing::all_close(f({x, Tensor::scalar(1, DType::Bool)})[0],
                                         floats({3}, {2, -1, 4})));
  EXPECT_TRUE(tscope::testing::all_close(f({x, Tensor::scalar(0, DType::Bool)})[0],
                                         floats({3}, {1, 4, 9})));
}

TEST(OnnxIf, ConditionKnownAtImportConvertsItsBranchOnly) {
  ModelBuilder model = if_model("c", true);
  model.scalar_initializer("c", kBool, 1);
  const ImportedModel imported = import_model_bytes(model.bytes(), "if.onnx");
  Function f = function(imported.input_variables(), imported.output_variables());
  EXPECT_TRUE(tscope::testing::all_close(f({floats({3}, {1, -2, 3})})[0], floats({3}, {2, -1, 4})));
}

TEST(OnnxIf, BranchesOfDifferentShapesAreUnsupported) {
  ModelBuilder model = if_model("c", true);
  model.input("c", kBool, {});
  const Error error =
      tscope::testing::error_of([&] { (void)import_model_bytes(model.bytes(), "if.onnx"); });
  EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
  EXPECT_TRUE(tscope::testing::contains(error, "'choose' (If"));
  EXPECT_TRUE(tscope::testing::contains(error, "if.onnx"));
}

}  // namespace
}  // namespace tscope::onnx
