// SPDX-License-Identifier: Apache-2.0
// A product inside a loop step whose weights are a non-sequence (a shared variable read by every
// step) runs on weights packed once per execution of the loop. The packing must follow the
// weights: a call after an update reads the new values, and every layout of the weights and of
// the added term gives the reference kernels' answer.
#include "support/test_util.h"

namespace tscope {
namespace {

constexpr std::int64_t kSteps = 6;
constexpr std::int64_t kRows = 5;
constexpr std::int64_t kWidth = 24;

// h[t] = tanh(z[t] + h[t-1] . weights), the shape of a recurrent layer's step, with `weights`
// built from the shared w inside the step.
ScanResult recurrent_loop(const Variable& z,
                          const Variable& w,
                          Variable (*weights)(const Variable&),
                          bool add_sequence) {
  const Variable h0 = constant(testing::random_tensor(DType::Float32, {kRows, kWidth}, 3));
  return scan(
      [&](const std::vector<Variable>& in) {
        const Variable product = dot(in[1], weights(w));
        return std::vector<Variable>{tanh(add_sequence ? in[0] + product : product)};
      },
      {z}, {h0}, {}, {.name = "recurrent"});
}

Variable as_is(const Variable& w) { return w; }
Variable transposed(const Variable& w) { return transpose(w); }

void expect_updates_followed(Variable (*weights)(const Variable&), bool add_sequence) {
  const Variable w =
      shared(testing::random_tensor(DType::Float32, {kWidth, kWidth}, 1, -0.3, 0.3), "w");
  const Variable z = tensor3(DType::Float32, "z");
  const Variable y = recurrent_loop(z, w, weights, add_sequence).outputs[0];
  FunctionOptions reference_options;
  reference_options.reference_kernels = true;
  Function fast = function({z}, {y}, {{w, w * 0.5 + 0.01}});
  Function reference = function({z}, {y}, {}, reference_options);
  const Tensor zs = testing::random_tensor(DType::Float32, {kSteps, kRows, kWidth}, 2);
  for (int call = 0; call < 3; ++call) {
    SCOPED_TRACE(call);
    const Tensor expected = reference({zs})[0];
    const Tensor got = fast({zs})[0];  // then w changes for the next call
    EXPECT_TRUE(testing::all_close(got, expected, 1e-4, 1e-5));
  }
}

TEST(ScanInvariantWeights, PackedWeightsFollowUpdatesBetweenCalls) {
  expect_updates_followed(as_is, true);
}

TEST(ScanInvariantWeights, TransposedWeightsMatchTheReference) {
  expect_updates_followed(transposed, true);
}

TEST(ScanInvariantWeights, ProductWithoutAddedTermMatchesTheReference) {
  expect_updates_followed(as_is, false);
}

// Weights computed in the step (not held still) take the unpacked path and still match.
TEST(ScanInvariantWeights, WeightsThatChangeEveryStepMatchTheReference) {
  const Variable z = tensor3(DType::Float32, "z");
  const Variable h0 = constant(testing::random_tensor(DType::Float32, {kRows, kRows}, 4));
  const ScanResult loop = scan(
      [&](const std::vector<Variable>& in) {
        return std::vector<Variable>{tanh(in[0] + dot(in[1], transpose(in[0])))};
      },
      {z}, {h0}, {}, {.name = "self"});
  FunctionOptions reference_options;
  reference_options.reference_kernels = true;
  Function fast = function({z}, {loop.outputs[0]});
  Function reference = function({z}, {loop.outputs[0]}, {}, reference_options);
  const Tensor zs = testing::random_tensor(DType::Float32, {kSteps, kRows, kRows}, 5);
  EXPECT_TRUE(testing::all_close(fast({zs})[0], reference({zs})[0], 1e-4, 1e-5));
}

}  // namespace
}  // namespace tscope
