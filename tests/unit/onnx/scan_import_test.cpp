// SPDX-License-Identifier: Apache-2.0
// ONNX Scan (opset 9+) imported as one Scan node: states and their final values, scan inputs
// read along another axis and in reverse, scan outputs written along another axis and in
// reverse, opset 8's batched form, and the error for a state whose shape changes. Values are
// checked against loops written out here.
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

Tensor floats(const Dims& shape, const std::vector<float>& values) {
  return Tensor::from_vector<float>(shape, values);
}

TEST(OnnxScan, RunningSumKeepsTheFinalStateAndEveryStep) {
  ModelBuilder model(11);
  model.input("initial", kFloat, {2}).input("x", kFloat, {3, 2});
  model.output("y", kFloat, {2}).output("z", kFloat, {3, 2});
  GraphBuilder body("sum_body");
  body.input("sum_in", kFloat, {2}).input("next", kFloat, {2});
  body.node("Add", {"sum_in", "next"}, {"sum_out"});
  body.node("Identity", {"sum_out"}, {"scan_out"});
  body.output("sum_out").output("scan_out");
  auto& scan = model.node("Scan", {"initial", "x"}, {"y", "z"}, "running_sum");
  testing::add_graph_attribute(scan, "body", body);
  testing::add_int_attribute(scan, "num_scan_inputs", 1);
  const ImportedModel imported = import_model_bytes(model.bytes(), "scan.onnx");
  EXPECT_EQ(imported.outputs[1].variable.type().dims, (Dims{3, 2}));
  Function f = function(imported.input_variables(), imported.output_variables());
  const std::vector<Tensor> out = f({floats({2}, {0, 0}), floats({3, 2}, {1, 2, 3, 4, 5, 6})});
  EXPECT_TRUE(tscope::testing::all_close(out[0], floats({2}, {9, 12})));
  EXPECT_TRUE(tscope::testing::all_close(out[1], floats({3, 2}, {1, 2, 4, 6, 9, 12})));
}

// Two scan inputs: a (4, 2) read forward along axis 0 and b (2, 4) read in reverse along axis 1.
// s += a[t] * b[:, 3 - t]; the outputs: s per step along axis 1 (2, 4), and a[t] * b[:, 3 - t]
// per step in reverse order along axis 0 (4, 2).
TEST(OnnxScan, InputAndOutputAxesAndDirections) {
  ModelBuilder model(11);
  model.input("s0", kFloat, {2}).input("a", kFloat, {4, 2}).input("b", kFloat, {2, 4});
  model.output("s", kFloat, {2}).output("s_steps", kFloat, {2, 4});
  model.output("products", kFloat, {4, 2});
  GraphBuilder body("axes_body");
  body.input("s_in", kFloat, {2}).input("a_t", kFloat, {2}).input("b_t", kFloat, {2});
  body.node("Mul", {"a_t", "b_t"}, {"product"});
  body.node("Add", {"s_in", "product"}, {"s_out"});
  body.node("Identity", {"s_out"}, {"s_scan"});
  body.output("s_out").output("s_scan").output("product");
  auto& scan = model.node("Scan", {"s0", "a", "b"}, {"s", "s_steps", "products"}, "axes");
  testing::add_graph_attribute(scan, "body", body);
  testing::add_int_attribute(scan, "num_scan_inputs", 2);
  testing::add_ints_attribute(scan, "scan_input_axes", {0, -1});
  testing::add_ints_attribute(scan, "scan_input_directions", {0, 1});
  testing::add_ints_attribute(scan, "scan_output_axes", {1, 0});
  testing::add_ints_attribute(scan, "scan_output_directions", {0, 1});
  const ImportedModel imported = import_model_bytes(model.bytes(), "axes.onnx");
  Function f = function(imported.input_variables(), imported.output_variables());

  const std::vector<float> a{1, 2, 3, 4, 5, 6, 7, 8};      // a[t][k] = a[t * 2 + k]
  const std::vector<float> b{1, -1, 2, -2, 3, -3, 4, -4};  // b[k][t] = b[k * 4 + t]
  std::vector<float> s{0.5f, -0.5f};
  std::vector<float> s_steps(8);
  std::vector<float> products(8);
  for (int t = 0; t < 4; ++t) {
    for (int k = 0; k < 2; ++k) {
      const float product =
          a[static_cast<std::size_t>(t * 2 + k)] * b[static_cast<std::size_t>(k * 4 + (3 - t))];
      s[static_cast<std::size_t>(k)] += product;
      s_steps[static_cast<std::size_t>(k * 4 + t)] = s[static_cast<std::size_t>(k)];
      products[static_cast<std::size_t>((3 - t) * 2 + k)] = product;
    }
  }
  const std::vector<Tensor> out =
      f({floats({2}, {0.5f, -0.5f}), floats({4, 2}, a), floats({2, 4}, b)});
  EXPECT_TRUE(tscope::testing::all_close(out[0], floats({2}, s)));
  EXPECT_TRUE(tscope::testing::all_close(out[1], floats({2, 4}, s_steps)));
  EXPECT_TRUE(tscope::testing::all_close(out[2], floats({4, 2}, products)));
}

// With an empty sequence no step runs: the final state is the initial one.
TEST(OnnxScan, EmptySequenceLeavesTheInitialState) {
  ModelBuilder model(11);
  model.input("initial", kFloat, {2}).input("x", kFloat, {"T", 2});
  model.output("y", kFloat, {2}).output("z", kFloat, {"T", 2});
  GraphBuilder body("sum_body");
  body.input("sum_in", kFloat, {2}).input("next", kFloat, {2});
  body.node("Add", {"sum_in", "next"}, {"sum_out"});
  body.node("Identity", {"sum_out"}, {"scan_out"});
  body.output("sum_out").output("scan_out");
  auto& scan = model.node("Scan", {"initial", "x"}, {"y", "z"}, "running_sum");
  testing::add_graph_attribute(scan, "body", body);
  testing::add_int_attribute(scan, "num_scan_inputs", 1);
  const ImportedModel imported = import_model_bytes(model.bytes(), "scan.onnx");
  Function f = function(imported.input_variables(), imported.output_variables());
  std::vector<Tensor> out = f({floats({2}, {3, 4}), Tensor::zeros(DType::Float32, {0, 2})});
  EXPECT_TRUE(tscope::testing::all_close(out[0], floats({2}, {3, 4})));
  EXPECT_EQ(out[1].shape(), (Dims{0, 2}));
  out = f({floats({2}, {3, 4}), floats({1, 2}, {1, 1})});
  EXPECT_TRUE(tscope::testing::all_close(out[0], floats({2}, {4, 5})));
}

// Opset 8: a batch axis first on every input and output, the scan axis second, `directions`.
TEST(OnnxScan, Opset8RunsEachBatchEntry) {
  ModelBuilder model(8);
  model.input("initial", kFloat, {2, 1}).input("x", kFloat, {2, 3, 1});
  model.output("y", kFloat, {2, 1}).output("z", kFloat, {2, 3, 1});
  GraphBuilder body("sum_body");
  body.input("sum_in", kFloat, {1}).input("next", kFloat, {1});
  body.node("Add", {"sum_in", "next"}, {"sum_out"});
  body.node("Identity", {"sum_out"}, {"scan_out"});
  body.output("sum_out").output("scan_out");
  auto& scan = model.node("Scan", {"", "initial", "x"}, {"y", "z"}, "batched");
  testing::add_graph_attribute(scan, "body", body);
  testing::add_int_attribute(scan, "num_scan_inputs", 1);
  testing::add_ints_attribute(scan, "directions", {1});
  const ImportedModel imported = import_model_bytes(model.bytes(), "scan8.onnx");
  Function f = function(imported.input_variables(), imported.output_variables());
  const std::vector<Tensor> out =
      f({floats({2, 1}, {0, 100}), floats({2, 3, 1}, {1, 2, 3, 4, 5, 6})});
  EXPECT_TRUE(tscope::testing::all_close(out[0], floats({2, 1}, {6, 115})));
  // Reversed reading: entry 0 sums 3, 2, 1; entry 1 sums 6, 5, 4 onto 100.
  EXPECT_TRUE(tscope::testing::all_close(out[1], floats({2, 3, 1}, {3, 5, 6, 106, 111, 115})));
}

TEST(OnnxScan, StateThatChangesShapeIsAnError) {
  ModelBuilder model(11);
  model.input("initial", kFloat, {2}).input("x", kFloat, {3, 2}).output("y", kFloat, {});
  GraphBuilder body("growing_body");
  body.input("s_in", kFloat, {2}).input("next", kFloat, {2});
  testing::add_int_attribute(body.node("Concat", {"s_in", "next"}, {"s_out"}), "axis", 0);
  body.output("s_out");
  auto& scan = model.node("Scan", {"initial", "x"}, {"y"}, "growing");
  testing::add_graph_attribute(scan, "body", body);
  testing::add_int_attribute(scan, "num_scan_inputs", 1);
  const Error error =
      tscope::testing::error_of([&] { (void)import_model_bytes(model.bytes(), "growing.onnx"); });
  EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
  EXPECT_TRUE(tscope::testing::contains(error, "'growing' (Scan"));
  EXPECT_TRUE(tscope::testing::contains(error, "growing.onnx"));
}

}  // namespace
}  // namespace tscope::onnx
