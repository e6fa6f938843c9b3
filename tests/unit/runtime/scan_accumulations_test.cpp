// SPDX-License-Identifier: Apache-2.0
// push_out_accumulated_products: a fed-back output that sums a matrix product per step, read
// only as its final value, leaves the loop as one product over all steps' rows. Each case
// compares the function with the rewrite against the same function without it.
#include "support/test_util.h"

namespace tscope {
namespace {

using testing::all_close;

Tensor random_doubles(const Dims& shape, std::uint64_t seed) {
  return testing::random_tensor(DType::Float64, shape, seed);
}

constexpr const char* kRule = "push_out_accumulated_products";

Function compiled(const std::vector<Variable>& inputs,
                  const std::vector<Variable>& outputs,
                  bool with_rule) {
  FunctionOptions options;
  options.profile = true;
  if (!with_rule) options.excluded_rewrites = {kRule};
  return function(inputs, outputs, {}, options);
}

std::int64_t times_applied(const Function& f) {
  for (const profile::RewriteRecord& rule : f.profile_record().compile.rewrites) {
    if (rule.name == kRule) return rule.applied_count;
  }
  return -1;
}

void expect_same_results(const std::vector<Variable>& inputs,
                         const std::vector<Variable>& outputs,
                         const std::vector<Tensor>& values,
                         std::int64_t expected_applied) {
  Function pushed = compiled(inputs, outputs, true);
  Function kept = compiled(inputs, outputs, false);
  const std::vector<Tensor> got = pushed(values);
  const std::vector<Tensor> expected = kept(values);
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].shape(), expected[i].shape());
    EXPECT_TRUE(all_close(got[i], expected[i], 1e-10, 1e-10));
  }
  EXPECT_EQ(times_applied(pushed), expected_applied);
  EXPECT_LE(times_applied(kept), 0);  // -1: excluded, so not listed
}

// The backward loop of h[t] = tanh(x[t] . w + h[t-1] . u) sums the gradients of w and u over
// the steps: both sums leave it.
TEST(ScanAccumulations, RecurrentWeightGradientsLeaveTheBackwardLoop) {
  const Variable x = tensor(DType::Float64, {kUnknownDim, 2, 4}, "x");
  const Variable w = shared(random_doubles({4, 3}, 1), "w");
  const Variable u = shared(random_doubles({3, 3}, 2), "u");
  const Variable h0 = constant(Tensor::zeros(DType::Float64, {2, 3}));
  const Variable h = scan(
                         [&](const std::vector<Variable>& in) {
                           return std::vector<Variable>{tanh(dot(in[0], w) + dot(in[1], u))};
                         },
                         {x}, {h0}, {}, {.name = "rnn"})
                         .outputs[0];
  const Variable cost = sum(h * h);
  std::vector<Variable> outputs{cost};
  for (const Variable& g : grad(cost, {w, u, x})) outputs.push_back(g);
  expect_same_results({x}, outputs, {random_doubles({7, 2, 4}, 3)}, 1);
  // No step: the sums keep the weights' shapes, which only the run time knows (shared).
  expect_same_results({x}, outputs, {Tensor::zeros(DType::Float64, {0, 2, 4})}, 1);
  // And the gradients are right: against finite differences.
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [&](const std::vector<Variable>& v) {
        const Variable hv =
            scan(
                [&](const std::vector<Variable>& in) {
                  return std::vector<Variable>{tanh(dot(in[0], v[0]) + dot(in[1], v[1]))};
                },
                {v[2]}, {h0}, {}, {.name = "rnn"})
                .outputs[0];
        return sum(hv * hv);
      },
      {random_doubles({4, 3}, 1), random_doubles({3, 3}, 2), random_doubles({5, 2, 4}, 3)}));
}

// Sums written by hand: a[t]^T . b[t] and a[t] . b[t], read as their final values only.
TEST(ScanAccumulations, HandWrittenSumsOfProductsLeaveTheLoop) {
  const Variable a = tensor(DType::Float64, {kUnknownDim, 2, 4}, "a");
  const Variable b = tensor(DType::Float64, {kUnknownDim, 2, 3}, "b");
  const Variable c = tensor(DType::Float64, {kUnknownDim, 4, 2}, "c");
  const ScanResult loop = scan(
      [&](const std::vector<Variable>& in) {
        // in: a[t], b[t], c[t], s1, s2
        return std::vector<Variable>{in[3] + dot(transpose(in[0]), in[1]),
                                     dot(in[2], in[1]) + in[4]};
      },
      {a, b, c}, {constant(random_doubles({4, 3}, 4)), constant(random_doubles({4, 3}, 5))}, {},
      {.name = "sums"});
  const std::vector<Variable> finals{subtensor(loop.outputs[0], {-1}),
                                     subtensor(loop.outputs[1], {-1})};
  const std::vector<Tensor> values{random_doubles({6, 2, 4}, 6), random_doubles({6, 2, 3}, 7),
                                   random_doubles({6, 4, 2}, 8)};
  expect_same_results({a, b, c}, finals, values, 1);
  // No step: the sums are their initial values.
  const std::vector<Tensor> empty{Tensor::zeros(DType::Float64, {0, 2, 4}),
                                  Tensor::zeros(DType::Float64, {0, 2, 3}),
                                  Tensor::zeros(DType::Float64, {0, 4, 2})};
  expect_same_results({a, b, c}, finals, empty, 1);
}

// A while loop stops early: the sum covers the steps it ran.
TEST(ScanAccumulations, WhileLoopSumsTheStepsItRan) {
  const Variable a = tensor(DType::Float64, {kUnknownDim, 2, 4}, "a");
  const Variable b = tensor(DType::Float64, {kUnknownDim, 2, 3}, "b");
  const Variable zero = constant(Tensor::scalar(0.0, DType::Float64));
  const ScanResult loop = scan(
      [&](const std::vector<Variable>& in) {
        // in: a[t], b[t], s, count
        const Variable count = in[3] + 1.0;
        return std::vector<Variable>{in[2] + dot(transpose(in[0]), in[1]), count, ge(count, 3.0)};
      },
      {a, b}, {constant(Tensor::zeros(DType::Float64, {4, 3})), zero}, {},
      {.name = "until", .until = true});
  expect_same_results({a, b}, {subtensor(loop.outputs[0], {-1})},
                      {random_doubles({8, 2, 4}, 9), random_doubles({8, 2, 3}, 10)}, 1);
}

// Sums whose every step is read, or whose state the step reads elsewhere, stay in the loop.
TEST(ScanAccumulations, SumsReadAtEveryStepStay) {
  const Variable a = tensor(DType::Float64, {kUnknownDim, 2, 4}, "a");
  const Variable b = tensor(DType::Float64, {kUnknownDim, 2, 3}, "b");
  const Variable s0 = constant(Tensor::zeros(DType::Float64, {4, 3}));
  auto loop = [&](bool state_read_twice) {
    return scan(
        [&](const std::vector<Variable>& in) {
          const Variable next = in[2] + dot(transpose(in[0]), in[1]);
          return std::vector<Variable>{state_read_twice ? next * in[2] : next};
        },
        {a, b}, {s0}, {}, {.name = "sum"});
  };
  const std::vector<Tensor> values{random_doubles({5, 2, 4}, 11), random_doubles({5, 2, 3}, 12)};
  expect_same_results({a, b}, {loop(false).outputs[0]}, values, 0);
  expect_same_results({a, b}, {subtensor(loop(true).outputs[0], {-1})}, values, 0);
}

}  // namespace
}  // namespace tscope
