// SPDX-License-Identifier: Apache-2.0
// Gradients of Rnn, Gru and Lstm (through RnnGrad, GruGrad, LstmGrad) against central finite
// differences, for every input, with each output alone and all together, forward and reverse;
// both kernels of the gradient ops agree; the gradient graph is one Grad node.
#include "recurrent_test_util.h"

namespace tscope {
namespace {
using testing::CellCase;
using testing::Shape;

enum class Use { All, YOnly, LastHOnly, LastCOnly };

Variable use_outputs(const RecurrentResult& result, Use use) {
  switch (use) {
    case Use::YOnly: return result.y;
    case Use::LastHOnly: return result.last_h;
    case Use::LastCOnly: return result.last_c;
    case Use::All: break;
  }
  std::vector<Variable> parts = {flatten(result.y), flatten(result.last_h)};
  if (result.last_c.defined()) parts.push_back(flatten(result.last_c));
  return join(0, parts);
}

::testing::AssertionResult gradient_ok(CellCase cell, const Shape& shape, Use use,
                                       std::uint64_t seed) {
  const testing::RecurrentPoint p = testing::point_for(cell, shape, DType::Float64, seed);
  return testing::gradient_matches_numeric(
      [&](const std::vector<Variable>& v) { return use_outputs(testing::apply_cell(cell, v, p), use); },
      testing::operand_values(p), {.rtol = 1e-5, .atol = 1e-7});
}

const std::vector<Shape>& grad_shapes() {
  static const std::vector<Shape> list = {
      {"all_inputs", 3, 2, 3, 2, true, true, true, true, false},
      {"all_inputs_reverse", 3, 2, 3, 2, true, true, true, true, true},
      {"batch1_odd", 4, 1, 5, 3, true, true, true, true, false},
      {"seq1", 1, 3, 2, 3, true, true, true, true, true},
      {"no_optional", 3, 2, 2, 3, false, false, false, false, false},
      {"sequence_lens", 4, 3, 2, 3, true, true, true, true, false, {4, 1, 2}},
      {"sequence_lens_reverse", 4, 3, 2, 3, true, true, true, true, true, {2, 4, 0}},
  };
  return list;
}

TEST(RecurrentGradients, EveryInputMatchesFiniteDifferences) {
  for (CellCase cell : testing::all_cells()) {
    for (const Shape& shape : grad_shapes()) {
      EXPECT_TRUE(gradient_ok(cell, shape, Use::All, 7))
          << testing::cell_name(cell) << " " << shape.name;
    }
  }
}

TEST(RecurrentGradients, EachOutputAloneMatchesFiniteDifferences) {
  // Absent output gradients take the Grad op's other input layouts (no dy, no d_last_h, ...).
  const Shape shape{"each_output", 3, 2, 3, 2, true, true, true, true, true};
  for (CellCase cell : testing::all_cells()) {
    std::vector<Use> uses = {Use::YOnly, Use::LastHOnly};
    if (cell == CellCase::Lstm) uses.push_back(Use::LastCOnly);
    for (Use use : uses) {
      EXPECT_TRUE(gradient_ok(cell, shape, use, 9))
          << testing::cell_name(cell) << " output " << static_cast<int>(use);
    }
  }
}

TEST(RecurrentGradients, GradOpFastMatchesReference) {
  const Shape shape{"grad_kernels", 5, 3, 7, 6, true, true, true, true, false};
  for (CellCase cell : testing::all_cells()) {
    for (DType dtype : {DType::Float64, DType::Float32}) {
      testing::RecurrentPoint p = testing::point_for(cell, shape, dtype, 13);
      const std::vector<Tensor> values = testing::operand_values(p);
      const std::vector<Variable> inputs = testing::operand_variables(values);
      const RecurrentResult result = testing::apply_cell(cell, inputs, p);
      Variable cost = sum(result.y * result.y) + sum(result.last_h);
      if (result.last_c.defined()) cost = cost + sum(result.last_c * result.last_c);
      const std::vector<Variable> grads = grad(cost, inputs);
      const double tolerance = dtype == DType::Float64 ? 1e-10 : 1e-4;
      EXPECT_TRUE(testing::fast_matches_reference(inputs, grads, values, tolerance, tolerance))
          << testing::cell_name(cell) << " " << dtype_name(dtype);
    }
  }
}

TEST(RecurrentGradients, OneGradNodeComputesEveryInputGradient) {
  const Shape shape{"graph", 3, 2, 3, 2, true, true, true, true, false};
  const std::vector<std::string> grad_ops = {"RnnGrad", "RnnGrad", "GruGrad", "GruGrad", "LstmGrad"};
  for (std::size_t i = 0; i < testing::all_cells().size(); ++i) {
    const CellCase cell = testing::all_cells()[i];
    const testing::RecurrentPoint p = testing::point_for(cell, shape, DType::Float32, 1);
    const std::vector<Variable> inputs = testing::operand_variables(testing::operand_values(p));
    const RecurrentResult result = testing::apply_cell(cell, inputs, p);
    const std::vector<Variable> grads = grad(sum(result.y), inputs);
    for (const Variable& g : grads) {
      ASSERT_TRUE(g.owner() != nullptr) << testing::cell_name(cell);
      EXPECT_EQ(g.owner(), grads[0].owner()) << testing::cell_name(cell);
      EXPECT_EQ(g.owner()->op().name, grad_ops[i]);
    }
  }
}

TEST(RecurrentGradients, SecondOrderIsNotDifferentiable) {
  Variable x = tensor(DType::Float64, {2, 1, 2}, "x");
  Variable w = tensor(DType::Float64, {8, 2}, "w");
  Variable r = tensor(DType::Float64, {8, 2}, "r");
  const RecurrentResult out = lstm(x, w, r);
  const Variable gw = grad(sum(out.y), {w})[0];
  try {
    (void)grad(sum(gw * gw), {w});
    FAIL() << "second-order gradient of Lstm did not throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::NotDifferentiable);
  }
}

}  // namespace
}  // namespace tscope
