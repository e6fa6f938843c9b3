// SPDX-License-Identifier: Apache-2.0
// LoopInvariantScope: which values a loop's body holds still through one execution, as kernels
// that keep packed weights ask it.
#include "tscope/graph/loop_invariants.h"

#include <gtest/gtest.h>

#include <vector>

#include "tscope/tscope.h"

namespace tscope {
namespace {

TEST(LoopInvariants, NothingHoldsStillOutsideALoop) {
  const Variable w = matrix(DType::Float32, "w");
  EXPECT_EQ(loop_invariant_execution(w), 0u);
  EXPECT_EQ(loop_invariant_execution(constant(Tensor::scalar(1.0, DType::Float32))), 0u);
}

TEST(LoopInvariants, TheScopesInputsAndTheirViewsHoldStill) {
  const Variable w = matrix(DType::Float32, "w");
  const Variable h = matrix(DType::Float32, "h");
  const std::vector<Variable> invariant{w};
  const LoopInvariantScope scope(invariant);
  const std::uint64_t execution = loop_invariant_execution(w);
  EXPECT_NE(execution, 0u);
  EXPECT_EQ(loop_invariant_execution(transpose(w)), execution);
  EXPECT_EQ(loop_invariant_execution(subtensor(transpose(w), {slice(0, 2)})), execution);
  // A step input, and a computed (not viewed) value, change from step to step.
  EXPECT_EQ(loop_invariant_execution(h), 0u);
  EXPECT_EQ(loop_invariant_execution(w * 2.0), 0u);
  EXPECT_EQ(loop_invariant_execution(transpose(h)), 0u);
}

TEST(LoopInvariants, EachExecutionHasItsOwnNumberAndTheInnermostLoopAnswers) {
  const Variable w = matrix(DType::Float32, "w");
  const Variable inner_w = matrix(DType::Float32, "inner_w");
  const std::vector<Variable> outer_inputs{w};
  const std::vector<Variable> inner_inputs{inner_w};
  std::uint64_t first = 0;
  {
    const LoopInvariantScope scope(outer_inputs);
    first = loop_invariant_execution(w);
    {
      const LoopInvariantScope inner(inner_inputs);
      EXPECT_NE(loop_invariant_execution(inner_w), 0u);
      EXPECT_NE(loop_invariant_execution(inner_w), first);
      EXPECT_EQ(loop_invariant_execution(w), 0u);
    }
    EXPECT_EQ(loop_invariant_execution(w), first);
    EXPECT_EQ(loop_invariant_execution(inner_w), 0u);
  }
  EXPECT_EQ(loop_invariant_execution(w), 0u);
  const LoopInvariantScope again(outer_inputs);
  EXPECT_NE(loop_invariant_execution(w), first);
}

}  // namespace
}  // namespace tscope
