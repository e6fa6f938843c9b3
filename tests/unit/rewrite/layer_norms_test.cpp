// SPDX-License-Identifier: Apache-2.0
// fuse_layer_norms: a layer normalisation written out in plain ops (as ONNX exports spell it)
// becomes one LayerNorm node with the same values up to rounding, in each spelling the exporters
// use, and nothing else is touched.
#include <cmath>
#include <map>
#include <string>

#include "support/graph_counts.h"
#include "support/test_util.h"

namespace tscope {
namespace {
using testing::op_counts;

Function compile(const std::vector<Variable>& inputs,
                 const std::vector<Variable>& outputs,
                 bool fuse) {
  FunctionOptions options;
  if (!fuse) options.excluded_rewrites = {"fuse_layer_norms"};
  return function(inputs, outputs, {}, options);
}

// The same outputs with and without the rule, on values far from zero and near it.
void expect_same_values(const std::vector<Variable>& inputs,
                        const std::vector<Variable>& outputs,
                        const std::vector<Tensor>& values) {
  Function fused = compile(inputs, outputs, true);
  Function plain = compile(inputs, outputs, false);
  const std::vector<Tensor> a = fused(values);
  const std::vector<Tensor> b = plain(values);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(testing::all_close(a[i], b[i], 1e-4, 1e-5));
}

struct Decomposed {
  Variable x = tensor(DType::Float32, {2, 3, 8}, "x");
  Variable gamma = vector(DType::Float32, "gamma", {8});
  Variable beta = vector(DType::Float32, "beta", {8});
  Tensor vx = testing::random_tensor(DType::Float32, {2, 3, 8}, 1, 5.0, 9.0);
  Tensor vgamma = testing::random_tensor(DType::Float32, {8}, 2, 0.5, 2.0);
  Tensor vbeta = testing::random_tensor(DType::Float32, {8}, 3);
  std::vector<Variable> inputs() const { return {x, gamma, beta}; }
  std::vector<Tensor> values() const { return {vx, vgamma, vbeta}; }
};

// ONNX's spelling below opset 17: (x - m) / sqrt(mean((x - m) ** 2) + eps) * gamma + beta.
TEST(FuseLayerNorms, ExportedFormBecomesOneNode) {
  const Decomposed d;
  const Variable centred = d.x - mean(d.x, {2}, true);
  const Variable variance = mean(pow(centred, 2.0), {2}, true);
  const int add_line = __LINE__ + 1;
  const Variable y = centred / sqrt(variance + 1e-5) * d.gamma + d.beta;
  Function f = compile(d.inputs(), {y}, true);
  EXPECT_EQ(op_counts(f), (std::map<std::string, int>{{"LayerNorm", 1}}));
  const ApplyNode* node = f.graph().toposort().front();
  EXPECT_EQ(node->provenance().site.line, static_cast<std::uint32_t>(add_line));
  EXPECT_EQ(node->attrs().get_int("axis"), 2);
  EXPECT_NEAR(node->attrs().get_double("epsilon"), 1e-5, 1e-12);
  EXPECT_EQ(node->num_inputs(), 3);
  expect_same_values(d.inputs(), {y}, d.values());
}

TEST(FuseLayerNorms, OtherSpellingsFuseToo) {
  const Decomposed d;
  const auto centred = [&](const std::vector<std::int64_t>& axes) {
    return d.x - mean(d.x, axes, true);
  };
  const auto inverse = [&](const Variable& c, const std::vector<std::int64_t>& axes) {
    return reciprocal(sqrt(1e-3 + mean(c * c, axes, true)));
  };
  const Variable c2 = centred({2});
  const Variable c12 = centred({1, 2});
  const Variable c_plain = centred({2});
  const Variable c_beta = centred({2});
  const std::vector<std::pair<std::string, Variable>> cases = {
      // The reciprocal's product in either order, the parameters first.
      {"reciprocal", d.beta + d.gamma * (inverse(c2, {2}) * c2)},
      // Two trailing axes, a parameter broadcast over them.
      {"two_axes", c12 * inverse(c12, {1, 2}) * d.gamma},
      {"no_parameters", c_plain / sqrt(mean(sqr(c_plain), {2}, true) + 1e-5)},
      {"beta_only", c_beta / sqrt(mean(sqr(c_beta), {2}, true) + 1e-5) + d.beta}};
  for (const auto& [name, y] : cases) {
    SCOPED_TRACE(name);
    EXPECT_EQ(op_counts(compile(d.inputs(), {y}, true)),
              (std::map<std::string, int>{{"LayerNorm", 1}}));
    expect_same_values(d.inputs(), {y}, d.values());
  }
}

TEST(FuseLayerNorms, LeavesNearMisses) {
  const Decomposed d;
  const auto normalise = [](const Variable& c, const std::vector<std::int64_t>& axes,
                            const Variable& eps) {
    return c / sqrt(mean(sqr(c), axes, true) + eps);
  };
  const Variable eps = constant(Tensor::scalar(1e-5, DType::Float32), "eps");
  const Variable c = d.x - mean(d.x, {2}, true);
  const Variable c_mid = d.x - mean(d.x, {1}, true);
  const Variable c_other = d.x - mean(d.x * 2.0, {2}, true);
  const Variable c_cube = d.x - mean(d.x, {2}, true);
  const Variable c_mixed = d.x - mean(d.x, {1, 2}, true);
  Variable runtime_eps = tensor(DType::Float32, {}, "runtime_eps");
  const std::vector<std::pair<std::string, Variable>> cases = {
      // The centred value is read a third time.
      {"shared_centred", normalise(c, {2}, eps) + c},
      // Not the trailing axes.
      {"middle_axis", normalise(c_mid, {1}, eps)},
      // The mean of something else than x.
      {"other_mean", normalise(c_other, {2}, eps)},
      // A cube, not a square.
      {"cube", c_cube / sqrt(mean(pow(c_cube, 3.0), {2}, true) + eps)},
      // The two means over different axes.
      {"mixed_axes", normalise(c_mixed, {2}, eps)},
      // An epsilon known only at run time.
      {"runtime_epsilon", normalise(c, {2}, runtime_eps)}};
  for (const auto& [name, y] : cases) {
    SCOPED_TRACE(name);
    std::vector<Variable> inputs = d.inputs();
    std::vector<Tensor> values = d.values();
    if (name == "runtime_epsilon") {
      inputs.push_back(runtime_eps);
      values.push_back(Tensor::scalar(1e-5, DType::Float32));
    }
    EXPECT_FALSE(op_counts(compile(inputs, {y}, true)).contains("LayerNorm"));
    expect_same_values(inputs, {y}, values);
  }
}

TEST(FuseLayerNorms, KeepsParametersThatBroadcastBeyondTheRows) {
  const Decomposed d;
  // gamma varies along the first axis, which is not normalised: the normalisation fuses, the
  // product stays.
  Variable wide = tensor(DType::Float32, {2, 1, 8}, "wide");
  const Variable c = d.x - mean(d.x, {2}, true);
  const Variable y = c / sqrt(mean(sqr(c), {2}, true) + 1e-5) * wide;
  Function f = compile({d.x, wide}, {y}, true);
  EXPECT_EQ(op_counts(f), (std::map<std::string, int>{{"LayerNorm", 1}, {"Mul", 1}}));
  const Tensor vwide = testing::random_tensor(DType::Float32, {2, 1, 8}, 4);
  expect_same_values({d.x, wide}, {y}, {d.vx, vwide});
}

TEST(FuseLayerNorms, IntermediateOutputsStayAndCanBeExcludedByName) {
  const Decomposed d;
  const Variable centred = d.x - mean(d.x, {2}, true);
  const Variable variance = mean(sqr(centred), {2}, true);
  const Variable y = centred / sqrt(variance + 1e-5);
  // The variance is an output too: nothing fuses.
  EXPECT_FALSE(op_counts(compile({d.x}, {y, variance}, true)).contains("LayerNorm"));
  FunctionOptions options;
  options.excluded_rewrites = {"fuse_layer_norms"};
  EXPECT_FALSE(op_counts(function({d.x}, {y}, {}, options)).contains("LayerNorm"));
}

}  // namespace
}  // namespace tscope
