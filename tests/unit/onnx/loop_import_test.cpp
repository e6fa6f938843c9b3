// SPDX-License-Identifier: Apache-2.0
// ONNX Loop imported as one Scan node: counted loops (trip count known at import or not), a
// condition that stops the loop early or before the first iteration, scan outputs, a body that
// reads the enclosing graph's values, a loop inside a loop, and the errors for what the loop op
// cannot run. Values are checked against loops written out here.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <vector>

#include "gradient_check.h"
#include "model_builder.h"
#include "support/test_util.h"
#include "tscope/onnx/import.h"

namespace tscope::onnx {
namespace {

using testing::GraphBuilder;
using testing::ModelBuilder;
constexpr int kFloat = ::onnx::TensorProto::FLOAT;
constexpr int kInt64 = ::onnx::TensorProto::INT64;
constexpr int kBool = ::onnx::TensorProto::BOOL;

Tensor floats(const Dims& shape, const std::vector<float>& values) {
  return Tensor::from_vector<float>(shape, values);
}

// y[i+1] = y[i] * 2 + i over a (2,) state; the scan output is every step's y.
GraphBuilder doubling_body() {
  GraphBuilder body("doubling_body");
  body.input("i", kInt64, {}).input("cond_in", kBool, {}).untyped_input("y_in");
  testing::add_int_attribute(body.node("Cast", {"i"}, {"i_float"}), "to", kFloat);
  body.node("Add", {"y_in", "y_in"}, {"twice"});
  body.node("Add", {"twice", "i_float"}, {"y_out"});
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.node("Identity", {"y_out"}, {"y_scan"});
  body.output("cond_out").output("y_out").output("y_scan");
  return body;
}

std::vector<float> doubling_reference(std::vector<float> y,
                                      std::int64_t steps,
                                      std::vector<float>* stacked) {
  for (std::int64_t i = 0; i < steps; ++i) {
    for (float& value : y) value = value * 2 + static_cast<float>(i);
    stacked->insert(stacked->end(), y.begin(), y.end());
  }
  return y;
}

TEST(OnnxLoop, CountedLoopWithConstantTripCount) {
  ModelBuilder model(13);
  model.input("y", kFloat, {2}).output("y_final", kFloat, {2}).output("ys", kFloat, {});
  model.scalar_initializer("M", kInt64, 4);
  auto& loop = model.node("Loop", {"M", "", "y"}, {"y_final", "ys"}, "counted");
  testing::add_graph_attribute(loop, "body", doubling_body());
  const ImportedModel imported = import_model_bytes(model.bytes(), "loop.onnx");
  EXPECT_EQ(imported.outputs[1].variable.type().dims, (Dims{4, 2}));

  Function f = function(imported.input_variables(), imported.output_variables());
  const std::vector<Tensor> out = f({floats({2}, {1.0f, -3.0f})});
  std::vector<float> stacked;
  const std::vector<float> final_y = doubling_reference({1.0f, -3.0f}, 4, &stacked);
  EXPECT_TRUE(tscope::testing::all_close(out[0], floats({2}, final_y)));
  EXPECT_TRUE(tscope::testing::all_close(out[1], floats({4, 2}, stacked)));
}

TEST(OnnxLoop, TripCountKnownOnlyWhenRunIncludingZero) {
  ModelBuilder model(13);
  model.input("M", kInt64, {}).input("y", kFloat, {2});
  model.output("y_final", kFloat, {2}).output("ys", kFloat, {});
  auto& loop = model.node("Loop", {"M", "", "y"}, {"y_final", "ys"}, "counted");
  testing::add_graph_attribute(loop, "body", doubling_body());
  const ImportedModel imported = import_model_bytes(model.bytes(), "loop.onnx");
  Function f = function(imported.input_variables(), imported.output_variables());
  for (const std::int64_t steps : {std::int64_t{0}, std::int64_t{1}, std::int64_t{6}}) {
    const std::vector<Tensor> out =
        f({Tensor::scalar(static_cast<double>(steps), DType::Int64), floats({2}, {0.5f, 2.0f})});
    std::vector<float> stacked;
    const std::vector<float> final_y = doubling_reference({0.5f, 2.0f}, steps, &stacked);
    EXPECT_TRUE(tscope::testing::all_close(out[0], floats({2}, final_y))) << steps << " steps";
    EXPECT_TRUE(tscope::testing::all_close(out[1], floats({steps, 2}, stacked)))
        << steps << " steps";
  }
}

// x[i+1] = x[i] / 2 while x[i+1] > 1, at most M times; the scan output is every step's x.
ModelBuilder halving_model(bool with_trip_count = true) {
  ModelBuilder model(13);
  if (with_trip_count) model.input("M", kInt64, {});
  model.input("cond", kBool, {}).input("x", kFloat, {});
  model.output("x_final", kFloat, {}).output("xs", kFloat, {});
  model.scalar_initializer("half", kFloat, 0.5).scalar_initializer("one", kFloat, 1.0);
  GraphBuilder body("halving_body");
  body.input("i", kInt64, {}).input("cond_in", kBool, {}).input("x_in", kFloat, {});
  body.node("Mul", {"x_in", "half"}, {"x_out"});
  body.node("Greater", {"x_out", "one"}, {"cond_out"});
  body.node("Identity", {"x_out"}, {"x_scan"});
  body.output("cond_out").output("x_out").output("x_scan");
  auto& loop =
      model.node("Loop", {with_trip_count ? "M" : "", "cond", "x"}, {"x_final", "xs"}, "halving");
  testing::add_graph_attribute(loop, "body", body);
  return model;
}

TEST(OnnxLoop, ConditionStopsAfterTheIterationThatTurnsItFalse) {
  const ImportedModel imported = import_model_bytes(halving_model().bytes(), "halving.onnx");
  Function f = function(imported.input_variables(), imported.output_variables());
  const Tensor many = Tensor::scalar(100, DType::Int64);
  const Tensor yes = Tensor::scalar(1, DType::Bool);
  std::vector<Tensor> out = f({many, yes, Tensor::scalar(20, DType::Float32)});
  EXPECT_TRUE(tscope::testing::all_close(out[0], Tensor::scalar(0.625, DType::Float32)));
  EXPECT_TRUE(tscope::testing::all_close(out[1], floats({5}, {10.0f, 5.0f, 2.5f, 1.25f, 0.625f})));
  // The trip count bounds it first.
  out = f({Tensor::scalar(2, DType::Int64), yes, Tensor::scalar(20, DType::Float32)});
  EXPECT_TRUE(tscope::testing::all_close(out[0], Tensor::scalar(5, DType::Float32)));
  EXPECT_TRUE(tscope::testing::all_close(out[1], floats({2}, {10.0f, 5.0f})));
  // The initial condition is tested before the first iteration.
  out = f({many, Tensor::scalar(0, DType::Bool), Tensor::scalar(20, DType::Float32)});
  EXPECT_TRUE(tscope::testing::all_close(out[0], Tensor::scalar(20, DType::Float32)));
  EXPECT_EQ(out[1].shape(), (Dims{0}));
}

// Without a trip count the condition alone bounds the loop (a while loop).
TEST(OnnxLoop, ConditionAloneBoundsALoopWithoutTripCount) {
  const ImportedModel imported =
      import_model_bytes(halving_model(/*with_trip_count=*/false).bytes(), "while.onnx");
  Function f = function(imported.input_variables(), imported.output_variables());
  const std::vector<Tensor> out =
      f({Tensor::scalar(1, DType::Bool), Tensor::scalar(1 << 20, DType::Float32)});
  EXPECT_TRUE(tscope::testing::all_close(out[0], Tensor::scalar(1, DType::Float32)));
  std::vector<float> expected;
  for (int power = 19; power >= 0; --power) expected.push_back(static_cast<float>(1 << power));
  EXPECT_TRUE(tscope::testing::all_close(out[1], floats({20}, expected)));
}

// Each step reads a graph input (w) and an initializer (b) from the enclosing graph, and writes
// two scan outputs, one of another shape than the state.
TEST(OnnxLoop, BodyReadsEnclosingValuesAndStacksScanOutputs) {
  ModelBuilder model(13);
  model.input("w", kFloat, {3}).input("h", kFloat, {3});
  model.output("h_final", kFloat, {3}).output("hs", kFloat, {}).output("sums", kFloat, {});
  model.float_initializer("b", {3}, {0.5f, -1.0f, 0.25f});
  model.scalar_initializer("M", kInt64, 3).scalar_initializer("go", kBool, 1);
  GraphBuilder body("rnn_body");
  body.input("i", kInt64, {}).input("cond_in", kBool, {}).untyped_input("h_in");
  body.node("Mul", {"h_in", "w"}, {"hw"});
  body.node("Add", {"hw", "b"}, {"pre"});
  body.node("Tanh", {"pre"}, {"h_out"});
  testing::add_int_attribute(body.node("ReduceSum", {"h_out"}, {"total"}), "keepdims", 0);
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.node("Identity", {"h_out"}, {"h_scan"});
  body.output("cond_out").output("h_out").output("h_scan").output("total");
  auto& loop = model.node("Loop", {"M", "go", "h"}, {"h_final", "hs", "sums"}, "rnn");
  testing::add_graph_attribute(loop, "body", body);
  const ImportedModel imported = import_model_bytes(model.bytes(), "rnn.onnx");
  Function f = function(imported.input_variables(), imported.output_variables());

  const std::vector<float> w{0.9f, -0.4f, 1.5f};
  const std::vector<float> b{0.5f, -1.0f, 0.25f};
  std::vector<float> h{0.1f, 0.2f, -0.3f};
  const std::vector<Tensor> out = f({floats({3}, w), floats({3}, h)});
  std::vector<float> hs;
  std::vector<float> sums;
  for (int step = 0; step < 3; ++step) {
    float total = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      h[k] = std::tanh(h[k] * w[k] + b[k]);
      total += h[k];
    }
    hs.insert(hs.end(), h.begin(), h.end());
    sums.push_back(total);
  }
  EXPECT_TRUE(tscope::testing::all_close(out[0], floats({3}, h)));
  EXPECT_TRUE(tscope::testing::all_close(out[1], floats({3, 3}, hs)));
  EXPECT_TRUE(tscope::testing::all_close(out[2], floats({3}, sums)));
}

// Body outputs that are not computed in the body: a carried value passed through, a scan output
// that is the enclosing graph's value, another that is a constant.
TEST(OnnxLoop, OutputsPassedThroughOrFromOutside) {
  ModelBuilder model(13);
  model.input("y", kFloat, {2}).input("w", kFloat, {2});
  model.output("y_final", kFloat, {2}).output("ws", kFloat, {}).output("cs", kFloat, {});
  model.scalar_initializer("M", kInt64, 3).float_initializer("c", {1}, {4.0f});
  GraphBuilder body("pass_body");
  body.input("i", kInt64, {}).input("cond_in", kBool, {}).untyped_input("y_in");
  body.output("cond_in").output("y_in").output("w").output("c");
  testing::add_graph_attribute(
      model.node("Loop", {"M", "", "y"}, {"y_final", "ws", "cs"}, "passing"), "body", body);
  const ImportedModel imported = import_model_bytes(model.bytes(), "pass.onnx");
  Function f = function(imported.input_variables(), imported.output_variables());
  const std::vector<Tensor> out = f({floats({2}, {1, 2}), floats({2}, {3, 5})});
  EXPECT_TRUE(tscope::testing::all_close(out[0], floats({2}, {1, 2})));
  EXPECT_TRUE(tscope::testing::all_close(out[1], floats({3, 2}, {3, 5, 3, 5, 3, 5})));
  EXPECT_TRUE(tscope::testing::all_close(out[2], floats({3, 1}, {4, 4, 4})));
}

// An outer loop of 3 iterations whose body runs an inner loop of (outer iteration + 1)
// iterations adding a value of the outermost graph: x + step * (1 + 2 + 3).
TEST(OnnxLoop, LoopInsideLoopReadsTheOutermostGraph) {
  ModelBuilder model(13);
  model.input("x", kFloat, {}).input("step", kFloat, {}).output("x_final", kFloat, {});
  model.scalar_initializer("M", kInt64, 3).scalar_initializer("one", kInt64, 1);
  GraphBuilder inner("inner_body");
  inner.input("j", kInt64, {}).input("c", kBool, {}).untyped_input("a_in");
  inner.node("Add", {"a_in", "step"}, {"a_out"});
  inner.node("Identity", {"c"}, {"c_out"});
  inner.output("c_out").output("a_out");
  GraphBuilder outer("outer_body");
  outer.input("i", kInt64, {}).input("cond_in", kBool, {}).untyped_input("x_in");
  outer.node("Add", {"i", "one"}, {"count"});
  testing::add_graph_attribute(outer.node("Loop", {"count", "", "x_in"}, {"x_out"}, "inner"),
                               "body", inner);
  outer.node("Identity", {"cond_in"}, {"cond_out"});
  outer.output("cond_out").output("x_out");
  testing::add_graph_attribute(model.node("Loop", {"M", "", "x"}, {"x_final"}, "outer"), "body",
                               outer);
  const ImportedModel imported = import_model_bytes(model.bytes(), "nested.onnx");
  Function f = function(imported.input_variables(), imported.output_variables());
  const std::vector<Tensor> out =
      f({Tensor::scalar(1, DType::Float32), Tensor::scalar(0.5, DType::Float32)});
  EXPECT_TRUE(tscope::testing::all_close(out[0], Tensor::scalar(1 + 0.5 * 6, DType::Float32)));
}

// Training through an imported loop: h <- tanh(h * w + b) three times, counted or as a while
// loop that its condition (the sum of h stays below 10) never stops.
TEST(OnnxLoop, GradientsFlowThroughCountedAndWhileLoops) {
  constexpr int kDouble = ::onnx::TensorProto::DOUBLE;
  for (const bool while_loop : {false, true}) {
    ModelBuilder model(13);
    model.input("w", kDouble, {3}).input("h", kDouble, {3}).output("h_final", kDouble, {3});
    model.scalar_initializer("M", kInt64, 3).scalar_initializer("go", kBool, 1);
    model.scalar_initializer("limit", kDouble, 10.0);
    GraphBuilder body("tanh_body");
    body.input("i", kInt64, {}).input("cond_in", kBool, {}).untyped_input("h_in");
    body.node("Mul", {"h_in", "w"}, {"hw"});
    body.node("Tanh", {"hw"}, {"h_out"});
    testing::add_int_attribute(body.node("ReduceSum", {"h_out"}, {"total"}), "keepdims", 0);
    body.node("Less", {"total", "limit"}, {"below"});
    body.node("Identity", {while_loop ? "below" : "cond_in"}, {"cond_out"});
    body.output("cond_out").output("h_out");
    testing::add_graph_attribute(model.node("Loop", {"M", "go", "h"}, {"h_final"}, "tanh_loop"),
                                 "body", body);
    const std::vector<Tensor> point{Tensor::from_vector<double>({3}, {0.7, -1.2, 0.4}),
                                    Tensor::from_vector<double>({3}, {0.3, 0.5, -0.8})};
    EXPECT_TRUE(testing::gradients_match_numeric(model.bytes(), point))
        << (while_loop ? "while loop" : "counted loop");
  }
}

TEST(OnnxLoop, LoopWithoutTripCountOrConditionIsUnsupported) {
  ModelBuilder model(13);
  model.input("y", kFloat, {2}).output("y_final", kFloat, {2}).output("ys", kFloat, {});
  testing::add_graph_attribute(model.node("Loop", {"", "", "y"}, {"y_final", "ys"}, "forever"),
                               "body", doubling_body());
  const Error error =
      tscope::testing::error_of([&] { (void)import_model_bytes(model.bytes(), "forever.onnx"); });
  EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
  EXPECT_TRUE(tscope::testing::contains(error, "'forever' (Loop"));
  EXPECT_TRUE(tscope::testing::contains(error, "forever.onnx"));
}

// A carried value that grows each iteration does not fit the loop's fixed row shape.
TEST(OnnxLoop, CarriedValueThatChangesShapeIsAnError) {
  ModelBuilder model(13);
  model.input("y", kFloat, {2}).output("y_final", kFloat, {});
  model.scalar_initializer("M", kInt64, 3);
  GraphBuilder body("growing_body");
  body.input("i", kInt64, {}).input("cond_in", kBool, {}).untyped_input("y_in");
  testing::add_int_attribute(body.node("Concat", {"y_in", "y_in"}, {"y_out"}), "axis", 0);
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.output("cond_out").output("y_out");
  testing::add_graph_attribute(model.node("Loop", {"M", "", "y"}, {"y_final"}, "growing"), "body",
                               body);
  const Error error =
      tscope::testing::error_of([&] { (void)import_model_bytes(model.bytes(), "growing.onnx"); });
  EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
  EXPECT_TRUE(tscope::testing::contains(error, "'growing' (Loop"));
}

}  // namespace
}  // namespace tscope::onnx
