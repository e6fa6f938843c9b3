// SPDX-License-Identifier: Apache-2.0
// Walks the op registry: every pullback is reached by a gradient check. Elementwise ops have
// theirs in the elementwise case table (ElementwiseCoverage checks every such op has a row, and
// ElementwiseGrad checks every row's gradient); every other op must be reached by a sample here,
// and every sample must match finite differences.
#include <set>

#include "grad_samples.h"
#include "tscope/graph/traversal.h"

namespace tscope {
namespace {

using testing::GradSample;

std::vector<Variable> sample_inputs(const GradSample& sample) {
  std::vector<Variable> inputs;
  for (std::size_t i = 0; i < sample.shapes.size(); ++i) {
    inputs.push_back(tensor(DType::Float64, sample.shapes[i], "in" + std::to_string(i)));
  }
  return inputs;
}

/// The ops whose pullback grad() calls when differentiating the sample's output with respect to
/// its inputs: those of the nodes that depend on an input.
std::set<std::string> reached_ops(const GradSample& sample) {
  const std::vector<Variable> inputs = sample_inputs(sample);
  const Variable output = sample.build(inputs);
  std::set<const VariableNode*> depends;
  for (const Variable& input : inputs) depends.insert(input.node());
  std::set<std::string> reached;
  for (const ApplyNode* apply : ancestors_in_topological_order({output})) {
    bool on_path = false;
    for (const Variable& input : apply->inputs())
      on_path = on_path || depends.contains(input.node());
    if (!on_path) continue;
    reached.insert(std::string(apply->op().name));
    for (int k = 0; k < apply->num_outputs(); ++k) depends.insert(&apply->output_node(k));
  }
  return reached;
}

TEST(GradCoverage, EveryPullbackIsReachedByAGradientCheck) {
  std::set<std::string> reached;
  for (const GradSample& sample : testing::grad_samples()) reached.merge(reached_ops(sample));
  for (const OpDef* def : op_registry().all()) {
    if (def->pullback == nullptr || def->traits.elementwise) continue;
    EXPECT_TRUE(reached.contains(std::string(def->name)))
        << def->name << " has a pullback that no gradient check reaches; add a row to "
        << "tests/conformance/grad/grad_samples.cpp";
  }
}

class GradSamples : public ::testing::TestWithParam<GradSample> {};

TEST_P(GradSamples, MatchFiniteDifferences) {
  const GradSample& sample = GetParam();
  std::vector<Tensor> point;
  for (std::size_t i = 0; i < sample.shapes.size(); ++i) {
    point.push_back(
        testing::random_tensor(DType::Float64, sample.shapes[i], 100 + i, sample.low, sample.high));
  }
  EXPECT_TRUE(testing::gradient_matches_numeric(sample.build, point, sample.options));
}

INSTANTIATE_TEST_SUITE_P(Ops,
                         GradSamples,
                         ::testing::ValuesIn(testing::grad_samples()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tscope
