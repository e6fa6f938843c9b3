// SPDX-License-Identifier: Apache-2.0
// Forward values of Rnn, Gru and Lstm against the step-by-step reference of this folder (both
// kernels, float64 and float32), over odd extents, batch 1, one step, reverse, every combination
// of optional operands, and sequence / batch extents known only at call time. Float32 Lstm and Gru
// without peepholes or sequence_lens run oneDNN's primitives, which have tests of their own below:
// weights packed once or on every call, the batch split across threads, extents that change.
#include <cmath>

#include "recurrent_test_util.h"
#include "tscope/ops/recurrent.h"
#include "tscope/threads/parallel_for.h"

namespace tscope {
namespace {
using testing::CellCase;
using testing::Shape;

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> list = {
      {"odd_all_inputs", 5, 3, 7, 5, true, true, true, true, false},
      {"odd_all_inputs_reverse", 5, 3, 7, 5, true, true, true, true, true},
      {"batch1", 6, 1, 4, 3, true, false, false, false, false},
      {"seq1", 1, 2, 5, 4, true, true, true, true, false},
      {"seq1_reverse", 1, 2, 5, 4, false, true, false, true, true},
      {"no_optional", 3, 2, 3, 2, false, false, false, false, false},
      {"initial_h_only_reverse", 4, 2, 1, 6, false, true, false, false, true},
      {"initial_c_without_h", 3, 2, 2, 3, true, false, true, false, false},
      {"sequence_lens", 5, 4, 3, 4, true, true, true, true, false, {5, 2, 0, 3}},
      {"sequence_lens_reverse", 5, 4, 3, 4, true, true, true, true, true, {1, 5, 3, 0}},
      {"sequence_lens_no_state", 3, 2, 2, 3, false, false, false, false, true, {2, 3}},
  };
  return list;
}

std::vector<Tensor> run_cell(CellCase cell, const testing::RecurrentPoint& p, bool reference) {
  const std::vector<Tensor> values = testing::operand_values(p);
  const std::vector<Variable> inputs = testing::operand_variables(values);
  const RecurrentResult result = testing::apply_cell(cell, inputs, p);
  std::vector<Variable> outputs = {result.y, result.last_h};
  if (result.last_c.defined()) outputs.push_back(result.last_c);
  return testing::run_graph(inputs, outputs, values, reference);
}

void expect_matches_reference(CellCase cell, const Shape& shape, DType dtype, bool reference,
                              double tolerance) {
  const testing::RecurrentPoint p = testing::point_for(cell, shape, dtype, 11);
  const testing::RecurrentExpected expected = testing::expected_for(cell, p);
  const std::vector<Tensor> actual = run_cell(cell, p, reference);
  const std::string label = testing::cell_name(cell) + " " + shape.name + " " +
                            std::string(dtype_name(dtype)) + (reference ? " ref" : " fast");
  ASSERT_EQ(actual.size(), cell == CellCase::Lstm ? 3U : 2U) << label;
  EXPECT_EQ(actual[0].dtype(), dtype) << label;
  EXPECT_TRUE(testing::all_close(actual[0].astype(DType::Float64), expected.y, tolerance, tolerance))
      << label << " y";
  EXPECT_TRUE(testing::all_close(actual[1].astype(DType::Float64), expected.last_h, tolerance,
                                 tolerance))
      << label << " last_h";
  if (cell == CellCase::Lstm) {
    EXPECT_TRUE(testing::all_close(actual[2].astype(DType::Float64), expected.last_c, tolerance,
                                   tolerance))
        << label << " last_c";
  }
}

TEST(RecurrentForward, Float64MatchesStepByStepReference) {
  for (CellCase cell : testing::all_cells()) {
    for (const Shape& shape : shapes()) {
      expect_matches_reference(cell, shape, DType::Float64, false, 1e-12);
      expect_matches_reference(cell, shape, DType::Float64, true, 1e-12);
    }
  }
}

TEST(RecurrentForward, Float32MatchesStepByStepReference) {
  for (CellCase cell : testing::all_cells()) {
    for (const Shape& shape : shapes()) {
      expect_matches_reference(cell, shape, DType::Float32, false, 2e-5);
      expect_matches_reference(cell, shape, DType::Float32, true, 2e-5);
    }
  }
}

TEST(RecurrentForward, FastMatchesReferenceOnLargerFloat32Shapes) {
  // Vector widths (4 floats) and BLAS blocking do not divide these extents. Without peepholes,
  // float32 Lstm runs oneDNN's primitive; with them, the BLAS loops.
  for (const Shape& shape : {Shape{"larger", 9, 5, 19, 23, true, true, true, true, true},
                             Shape{"larger_no_peepholes", 9, 5, 19, 23, true, true, true, false, false},
                             Shape{"larger_reverse_no_state", 7, 3, 17, 33, true, false, false, false, true}}) {
  for (CellCase cell : testing::all_cells()) {
    // The shapes without peepholes are for the oneDNN paths of Lstm and Gru (a ReLU Rnn over 33
    // units grows past float32's 1e-4 agreement with float64 there).
    if (!shape.peepholes && testing::gates_of(cell) == 1) continue;
    const testing::RecurrentPoint p = testing::point_for(cell, shape, DType::Float32, 5);
    const std::vector<Tensor> values = testing::operand_values(p);
    const std::vector<Variable> inputs = testing::operand_variables(values);
    const RecurrentResult result = testing::apply_cell(cell, inputs, p);
    std::vector<Variable> outputs = {result.y, result.last_h};
    if (result.last_c.defined()) outputs.push_back(result.last_c);
    EXPECT_TRUE(testing::fast_matches_reference(inputs, outputs, values, 1e-4, 1e-5))
        << testing::cell_name(cell) << " " << shape.name;
  }
  }
}

// The cells whose float32 kernel runs a oneDNN primitive: Gru in both reset forms (gru_forward,
// lbr_gru_forward) and Lstm.
const std::vector<CellCase>& dnnl_cells() {
  static const std::vector<CellCase> cells = {CellCase::Gru, CellCase::GruLinearBeforeReset,
                                              CellCase::Lstm};
  return cells;
}

std::vector<Variable> all_outputs(const RecurrentResult& result) {
  std::vector<Variable> outputs = {result.y, result.last_h};
  if (result.last_c.defined()) outputs.push_back(result.last_c);
  return outputs;
}

// oneDNN's float32 Lstm and Gru pack W, R and the biases into their own layout. They keep that
// packing across calls only when they are constants (or views of constants, which is what an ONNX
// import makes of its initializers): shared weights may be rewritten in place by an update, so
// they are packed again on every call.
testing::RecurrentExpected expected_with_x(CellCase cell,
                                           testing::RecurrentPoint p,
                                           const Tensor& x) {
  p.x = x;
  return testing::expected_for(cell, p);
}

TEST(RecurrentForward, OneDnnKeepsPackedConstantWeightsAcrossCalls) {
  const Shape shape{"views_of_constants", 4, 3, 5, 6, true, false, false, false, false};
  // ONNX stores W, R and B with a leading direction axis; the import takes slice 0 of each.
  auto view_of_constant = [](const Tensor& value) {
    Dims stacked{1};
    for (std::int64_t d : value.shape()) stacked.push_back(d);
    return subtensor(constant(value.reshaped(stacked)), {0});
  };
  for (CellCase cell : dnnl_cells()) {
    const testing::RecurrentPoint p = testing::point_for(cell, shape, DType::Float32, 7);
    Variable x = tensor3(DType::Float32, "x");
    const RecurrentResult result = testing::apply_cell(
        cell, {x, view_of_constant(p.w), view_of_constant(p.r), view_of_constant(p.bias)}, p);
    Function f = function({x}, {result.y});
    for (std::uint64_t seed : {31, 32, 33}) {
      const Tensor next_x = testing::random_tensor(DType::Float32, p.x.shape(), seed);
      const std::vector<Tensor> y = f({next_x});
      EXPECT_TRUE(testing::all_close(y[0].astype(DType::Float64),
                                     expected_with_x(cell, p, next_x).y, 2e-5, 2e-5))
          << testing::cell_name(cell) << " call with input seed " << seed;
    }
  }
}

TEST(RecurrentForward, OneDnnPacksSharedWeightsOnEveryCall) {
  const Shape shape{"shared", 4, 3, 5, 6, true, false, false, false, false};
  for (CellCase cell : dnnl_cells()) {
    const std::string name = testing::cell_name(cell);
    testing::RecurrentPoint p = testing::point_for(cell, shape, DType::Float32, 8);
    Variable x = tensor3(DType::Float32, "x");
    Variable w = shared(p.w, "w");
    Variable r = shared(p.r, "r");
    Variable b = shared(p.bias, "b");
    const RecurrentResult result = testing::apply_cell(cell, {x, w, r, b}, p);
    // Each call halves R and adds 0.25 to the biases after computing y.
    Function f = function({x}, {result.y}, {{r, r * 0.5}, {b, b + 0.25}});
    for (int call = 0; call < 3; ++call) {
      const std::vector<Tensor> y = f({p.x});
      EXPECT_TRUE(testing::all_close(y[0].astype(DType::Float64), expected_with_x(cell, p, p.x).y,
                                     2e-5, 2e-5))
          << name << " call " << call;
      p.r = r.get_value().clone();
      p.bias = b.get_value().clone();
    }
    // A shared value holds the caller's tensor: rewriting that tensor in place (weights loaded
    // into the same buffer) changes W while W, R and the biases keep their addresses.
    Function g = function({x}, {result.y});
    Tensor loaded = testing::random_tensor(DType::Float32, p.w.shape(), 9);
    w.set_value(loaded);
    p.w = loaded.clone();
    EXPECT_TRUE(testing::all_close(g({p.x})[0].astype(DType::Float64),
                                   expected_with_x(cell, p, p.x).y, 2e-5, 2e-5))
        << name << " after set_value";
    const Tensor next = testing::random_tensor(DType::Float32, p.w.shape(), 10);
    std::copy_n(next.data<float>(), next.numel(), loaded.data<float>());
    p.w = next;
    EXPECT_TRUE(testing::all_close(g({p.x})[0].astype(DType::Float64),
                                   expected_with_x(cell, p, p.x).y, 2e-5, 2e-5))
        << name << " after rewriting the set value in place";
  }
}

void expect_outputs_match(const std::vector<Tensor>& actual,
                          const testing::RecurrentExpected& expected,
                          const std::string& label) {
  EXPECT_TRUE(testing::all_close(actual[0].astype(DType::Float64), expected.y, 1e-4, 1e-5))
      << label << " y";
  EXPECT_TRUE(testing::all_close(actual[1].astype(DType::Float64), expected.last_h, 1e-4, 1e-5))
      << label << " last_h";
  if (actual.size() > 2) {
    EXPECT_TRUE(testing::all_close(actual[2].astype(DType::Float64), expected.last_c, 1e-4, 1e-5))
        << label << " last_c";
  }
}

// W and R at the usual initialisation scale (uniform in +-1/sqrt(hidden), as torch draws them).
// With unit-scale weights, a long sequence over many units saturates the gates and amplifies
// float32 rounding past a 1e-4 agreement with float64, in the BLAS loops as in oneDNN.
void use_initialisation_scale(testing::RecurrentPoint& p, std::uint64_t seed) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(p.r.shape()[1]));
  p.w = testing::random_tensor(DType::Float32, p.w.shape(), seed, -bound, bound);
  p.r = testing::random_tensor(DType::Float32, p.r.shape(), seed + 1, -bound, bound);
}

TEST(RecurrentForward, OneDnnSplitsTheBatchAcrossThreads) {
  // With several threads the batch rows are split between them (unequal shares when the batch does
  // not divide, one thread per row when rows are fewer than threads); one compiled function
  // follows a change of thread count between calls. Some shapes stay whole: a batch of one; a
  // layer of too few flops to repay waking the threads, run on the calling thread alone; and
  // weights too large to split (every thread would read all of them), run on oneDNN's own
  // threading.
  struct SplitCase {
    Shape shape;
    bool splits;
  };
  for (const SplitCase& c :
       {SplitCase{{"batch7", 24, 7, 32, 64, true, true, true, false, false}, true},
        SplitCase{{"batch2_reverse", 64, 2, 32, 64, true, true, false, false, true}, true},
        SplitCase{{"batch1", 3, 1, 4, 6, false, false, true, false, false}, false},
        SplitCase{{"few_flops", 5, 7, 6, 9, true, true, true, false, false}, false},
        SplitCase{{"large_weights", 2, 4, 256, 256, true, true, true, false, false}, false}}) {
    const Shape& shape = c.shape;
    for (CellCase cell : dnnl_cells()) {
      testing::RecurrentPoint p = testing::point_for(cell, shape, DType::Float32, 17);
      use_initialisation_scale(p, 18);
      const testing::RecurrentExpected expected = testing::expected_for(cell, p);
      const std::vector<Tensor> values = testing::operand_values(p);
      const std::vector<Variable> inputs = testing::operand_variables(values);
      Function f = function(inputs, all_outputs(testing::apply_cell(cell, inputs, p)));
      for (int threads : {2, 3, 1, 2}) {
        const threads::ScopedThreadCount scoped(threads);
        const std::string label =
            testing::cell_name(cell) + " " + shape.name + " threads " + std::to_string(threads);
        // The kernel splits by the thread count it sees at call time: check that the count took
        // effect and that the extents meant to split do, so the comparison below is of a split
        // run, not of serial against serial.
        ASSERT_EQ(threads::parallel_threads(), threads) << label;
        const bool splits = threads > 1 && c.splits;
        EXPECT_EQ(
            ops::detail::recurrent_batch_parts(testing::gates_of(cell), shape.steps, shape.batch,
                                               shape.input, shape.hidden, threads),
            splits ? std::min<std::int64_t>(threads, shape.batch) : 1)
            << label;
        expect_outputs_match(f(values), expected, label);
      }
    }
  }
}

TEST(RecurrentForward, OneDnnFollowsExtentsThatChangeBetweenCalls) {
  // One compiled float32 function with constant weights, called with other sequence lengths and
  // batch sizes and then with the first ones again: each change builds new primitives and packs
  // the weights into them.
  for (bool reverse : {false, true}) {
    const Shape shape{"changing", 4, 3, 5, 6, true, true, true, false, reverse};
    for (CellCase cell : dnnl_cells()) {
      const testing::RecurrentPoint first = testing::point_for(cell, shape, DType::Float32, 23);
      std::vector<Variable> inputs = {tensor3(DType::Float32, "x"), constant(first.w),
                                      constant(first.r), constant(first.bias),
                                      matrix(DType::Float32, "h0")};
      if (first.initial_c.defined()) inputs.push_back(matrix(DType::Float32, "c0"));
      std::vector<Variable> call_inputs = {inputs[0], inputs[4]};
      if (first.initial_c.defined()) call_inputs.push_back(inputs[5]);
      Function g = function(call_inputs, all_outputs(testing::apply_cell(cell, inputs, first)));
      for (auto [steps, batch] :
           {std::pair<std::int64_t, std::int64_t>{4, 3}, {2, 5}, {6, 1}, {4, 3}}) {
        testing::RecurrentPoint p = first;
        const std::uint64_t seed = static_cast<std::uint64_t>(10 * steps + batch);
        p.x = testing::random_tensor(DType::Float32, {steps, batch, shape.input}, seed);
        p.initial_h = testing::random_tensor(DType::Float32, {batch, shape.hidden}, seed + 1);
        std::vector<Tensor> values = {p.x, p.initial_h};
        if (first.initial_c.defined()) {
          p.initial_c = testing::random_tensor(DType::Float32, {batch, shape.hidden}, seed + 2);
          values.push_back(p.initial_c);
        }
        const std::string label = testing::cell_name(cell) + (reverse ? " reverse" : "") +
                                  " steps " + std::to_string(steps) + " batch " +
                                  std::to_string(batch);
        expect_outputs_match(g(values), testing::expected_for(cell, p), label);
      }
    }
  }
}

TEST(RecurrentForward, ExtentsKnownOnlyAtCallTime) {
  // One compiled function, called with two sequence lengths and batch sizes.
  for (CellCase cell : testing::all_cells()) {
    const int gates = testing::gates_of(cell);
    Variable x = tensor3(DType::Float64, "x");
    Variable h0 = matrix(DType::Float64, "h0");
    const Shape shape{"dynamic", 4, 3, 2, 3, false, true, false, false, false};
    const testing::RecurrentPoint first = testing::point_for(cell, shape, DType::Float64, 21);
    Variable w = constant(first.w);
    Variable r = constant(first.r);
    const RecurrentResult result = testing::apply_cell(cell, {x, w, r, h0}, first);
    EXPECT_EQ(result.y.type().dims, (Dims{kUnknownDim, kUnknownDim, 3})) << testing::cell_name(cell);
    Function f = function({x, h0}, {result.y});
    for (std::int64_t steps : {4, 2}) {
      testing::RecurrentPoint p = first;
      p.x = testing::random_tensor(DType::Float64, {steps, steps + 1, 2}, 30 + steps);
      p.initial_h = testing::random_tensor(DType::Float64, {steps + 1, 3}, 40 + steps);
      const std::vector<Tensor> y = f({p.x, p.initial_h});
      EXPECT_TRUE(testing::all_close(y[0], testing::expected_for(cell, p).y, 1e-12, 1e-12))
          << testing::cell_name(cell) << " steps " << steps << " gates " << gates;
    }
  }
}

TEST(RecurrentForward, LastStateOfAReverseLayerIsItsFirstOutput) {
  const Shape shape{"reverse", 4, 2, 3, 3, true, false, false, false, true};
  const testing::RecurrentPoint p = testing::point_for(CellCase::Lstm, shape, DType::Float64, 3);
  const std::vector<Tensor> out = run_cell(CellCase::Lstm, p, false);
  const Tensor y = out[0].contiguous();
  const Tensor first_step = y.view({2, 3}, {3, 1}, y.offset());
  EXPECT_TRUE(testing::all_close(out[1], first_step.contiguous(), 0, 0));
}

}  // namespace
}  // namespace tscope
