// SPDX-License-Identifier: Apache-2.0
// ONNX RNN, GRU and LSTM imported as recurrent ops: one node per direction (the values are the
// backend conformance suite's business), the direction slices wired as the ops' operands, a
// sequence of unknown length, and training through the imported graph with one Grad node per
// direction.
#include <onnx/onnx_pb.h>

#include <map>

#include "model_builder.h"
#include "support/test_util.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/function_graph.h"
#include "tscope/onnx/import.h"

namespace tscope::onnx {
namespace {

using testing::DimSpec;
using testing::ModelBuilder;
constexpr int kFloat = ::onnx::TensorProto::FLOAT;
constexpr std::int64_t kHidden = 3;
constexpr std::int64_t kInput = 2;

std::vector<float> ramp(std::int64_t count, float scale) {
  std::vector<float> values;
  for (std::int64_t i = 0; i < count; ++i) values.push_back(scale * static_cast<float>((i * 7) % 11 - 5));
  return values;
}

/// One recurrent node with W, R and B initializers; `steps` may be symbolic.
ModelBuilder recurrent_model(const std::string& op_type, int gates, const std::string& direction,
                             DimSpec steps) {
  const std::int64_t directions = direction == "bidirectional" ? 2 : 1;
  ModelBuilder model(14);
  model.input("x", kFloat, {steps, 2, kInput});
  model.output("y", kFloat, {});
  model.output("y_h", kFloat, {});
  model.float_initializer("w", {directions, gates * kHidden, kInput},
                          ramp(directions * gates * kHidden * kInput, 0.1f));
  model.float_initializer("r", {directions, gates * kHidden, kHidden},
                          ramp(directions * gates * kHidden * kHidden, 0.05f));
  model.float_initializer("b", {directions, 2 * gates * kHidden},
                          ramp(directions * 2 * gates * kHidden, 0.02f));
  auto& node = model.node(op_type, {"x", "w", "r", "b"}, {"y", "y_h"}, "layer");
  testing::add_int_attribute(node, "hidden_size", kHidden);
  auto* attribute = node.add_attribute();
  attribute->set_name("direction");
  attribute->set_type(::onnx::AttributeProto::STRING);
  attribute->set_s(direction);
  return model;
}

std::map<std::string, int> op_counts(const std::vector<Variable>& inputs,
                                     const std::vector<Variable>& outputs) {
  std::map<std::string, int> counts;
  const FunctionGraph graph = FunctionGraph::clone_of(inputs, outputs);
  for (const ApplyNode* node : graph.toposort()) ++counts[std::string(node->op().name)];
  return counts;
}

TEST(OnnxRecurrent, OneNodePerDirection) {
  const struct {
    const char* op_type;
    int gates;
    const char* registry_name;
  } cells[] = {{"RNN", 1, "Rnn"}, {"GRU", 3, "Gru"}, {"LSTM", 4, "Lstm"}};
  for (const auto& cell : cells) {
    for (const std::string direction : {"forward", "reverse", "bidirectional"}) {
      const ImportedModel model = import_model_bytes(
          recurrent_model(cell.op_type, cell.gates, direction, 5).bytes(), "rnn.onnx");
      const std::map<std::string, int> counts =
          op_counts(model.input_variables(), model.output_variables());
      const int expected = direction == "bidirectional" ? 2 : 1;
      EXPECT_EQ(counts.count(cell.registry_name) ? counts.at(cell.registry_name) : 0, expected)
          << cell.op_type << " " << direction;
      EXPECT_EQ(counts.count("Dot") + counts.count("Dot22") + counts.count("Gemm"), 0U)
          << cell.op_type << " " << direction;
      const Variable y = model.output_variables()[0];
      EXPECT_EQ(y.type().dims, (Dims{5, expected, 2, kHidden})) << cell.op_type << " " << direction;
    }
  }
}

TEST(OnnxRecurrent, SequenceOfUnknownLengthImportsAndRuns) {
  const ImportedModel model =
      import_model_bytes(recurrent_model("LSTM", 4, "forward", "steps").bytes(), "lstm.onnx");
  Function f = function(model.input_variables(), model.output_variables());
  for (std::int64_t steps : {3, 6}) {
    const std::vector<Tensor> out = f({tscope::testing::random_tensor(DType::Float32, {steps, 2, kInput}, 1)});
    EXPECT_EQ(out[0].shape(), (Dims{steps, 1, 2, kHidden}));
    EXPECT_EQ(out[1].shape(), (Dims{1, 2, kHidden}));
  }
}

TEST(OnnxRecurrent, TrainingThroughAnImportedLayerBuildsOneGradNodePerDirection) {
  const ImportedModel model = import_model_bytes(
      recurrent_model("LSTM", 4, "bidirectional", 4).bytes(), "lstm.onnx");
  std::vector<Variable> weights;
  for (const NamedVariable& initializer : model.initializers) weights.push_back(initializer.variable);
  ASSERT_EQ(weights.size(), 3U);
  Variable loss = sum(sqr(model.output_variables()[0]));
  const std::vector<Variable> grads = grad(loss, weights);
  const std::map<std::string, int> counts = op_counts(model.input_variables(), grads);
  EXPECT_EQ(counts.count("LstmGrad") ? counts.at("LstmGrad") : 0, 2);
  Function f = function(model.input_variables(), grads);
  const std::vector<Tensor> values = f({tscope::testing::random_tensor(DType::Float32, {4, 2, kInput}, 2)});
  EXPECT_EQ(values[0].shape(), (Dims{2, 4 * kHidden, kInput}));
  EXPECT_EQ(values[2].shape(), (Dims{2, 8 * kHidden}));
}

}  // namespace
}  // namespace tscope::onnx
