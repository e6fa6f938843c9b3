// SPDX-License-Identifier: Apache-2.0
// Scan: loop semantics (taps, outputs not fed back, step counts, reversed loops, captured
// values), errors, gradients against finite differences, the steady state's allocations, and
// the loop's nested profile.
#include <algorithm>
#include <limits>
#include <thread>

#include "support/test_util.h"
#include "tscope/grad/verify_grad.h"
#include "tscope/ops/random.h"
#include "tscope/profile/json_export.h"
#include "tscope/profile/report_folded.h"
#include "tscope/profile/tips.h"
#include "tscope/profile/trace.h"
#include "tscope/profile/trace_recorder.h"

namespace tscope {
namespace {

using testing::all_close;

Tensor doubles(const Dims& shape, const std::vector<double>& values) {
  return Tensor::from_doubles(DType::Float64, shape, values);
}

Tensor random_doubles(const Dims& shape, std::uint64_t seed) {
  std::vector<double> values(static_cast<std::size_t>(shape.product()));
  std::uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (double& value : values) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    value = static_cast<double>((state >> 11) % 2000) / 1000.0 - 1.0;
  }
  return doubles(shape, values);
}

TEST(Scan, CumulativeSumStacksEveryStep) {
  Variable x = vector(DType::Float64, "x");
  Variable zero = constant(Tensor::scalar(0.0, DType::Float64));
  ScanResult result =
      scan([](const std::vector<Variable>& in) { return std::vector<Variable>{in[1] + in[0]}; },
           {x}, {zero}, {}, {.name = "cumsum"});
  Function f = function({x}, {result.outputs[0]});
  const Tensor out = f({doubles({4}, {1, 2, 3, 4})})[0];
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{1, 3, 6, 10}));
  EXPECT_NE(f.graph().toposort().back()->op_string().find("Scan{cumsum}"), std::string::npos);
}

TEST(Scan, StateTapsReadSeveralStepsBack) {
  // f[t] = f[t-1] + f[t-2] from the window [0, 1].
  Variable window = constant(Tensor::from_vector<double>({2}, {0, 1}));
  ScanResult result =
      scan([](const std::vector<Variable>& in) { return std::vector<Variable>{in[0] + in[1]}; }, {},
           {ScanOutput(window, {-2, -1})}, {}, {.n_steps = 6, .name = "fibonacci"});
  Function f = function({}, {result.outputs[0]});
  EXPECT_EQ(f({})[0].to_doubles(), (std::vector<double>{1, 2, 3, 5, 8, 13}));
}

TEST(Scan, SequenceTapsReadAroundTheStep) {
  // y[t] = x[t-1] + 2 x[t] + 3 x[t+1]: the step count is the length less the taps' span.
  Variable x = vector(DType::Float64, "x");
  ScanResult result = scan(
      [](const std::vector<Variable>& in) {
        return std::vector<Variable>{in[0] + in[1] * 2.0 + in[2] * 3.0};
      },
      {ScanSequence(x, {-1, 0, 1})}, {ScanOutput::none()});
  Function f = function({x}, {result.outputs[0]});
  EXPECT_EQ(f({doubles({5}, {1, 2, 3, 4, 5})})[0].to_doubles(),
            (std::vector<double>{1 + 4 + 9, 2 + 6 + 12, 3 + 8 + 15}));
}

TEST(Scan, OutputsNotFedBackAndStatesKeepTheStepOrder) {
  // Step outputs: (running max, x[t] squared, running count), only the first and last fed back.
  Variable x = vector(DType::Float64, "x");
  ScanResult result = scan(
      [](const std::vector<Variable>& in) {
        // in: x[t], max[t-1], count[t-1]
        return std::vector<Variable>{maximum(in[1], in[0]), sqr(in[0]), in[2] + 1.0};
      },
      {x},
      {constant(Tensor::scalar(-100.0, DType::Float64)), ScanOutput::none(),
       constant(Tensor::scalar(0.0, DType::Float64))});
  Function f = function({x}, result.outputs);
  const auto out = f({doubles({4}, {3, 1, 4, 1})});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{3, 3, 4, 4}));
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{9, 1, 16, 1}));
  EXPECT_EQ(out[2].to_doubles(), (std::vector<double>{1, 2, 3, 4}));
}

TEST(Scan, SymbolicStepCountAndMatrixStates) {
  // x[t] = x[t-1] A, n steps, n an input of the function.
  Variable a = matrix(DType::Float64, "A");
  Variable x0 = vector(DType::Float64, "x0");
  Variable n = scalar(DType::Int64, "n");
  ScanResult result =
      scan([&](const std::vector<Variable>& in) { return std::vector<Variable>{dot(in[0], a)}; },
           {}, {x0}, {}, {.n_steps = n, .name = "power"});
  Function f = function({a, x0, n}, {result.outputs[0]});
  const Tensor matrix_a = doubles({2, 2}, {0, 1, 1, 1});
  const auto out = f({matrix_a, doubles({2}, {0, 1}), Tensor::scalar(4, DType::Int64)})[0];
  EXPECT_EQ(out.shape(), (Dims{4, 2}));
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{1, 1, 1, 2, 2, 3, 3, 5}));
  const auto none = f({matrix_a, doubles({2}, {0, 1}), Tensor::scalar(0, DType::Int64)})[0];
  EXPECT_EQ(none.shape(), (Dims{0, 2}));
}

TEST(Scan, GoBackwardsReadsTheSequenceReversed) {
  Variable x = vector(DType::Float64, "x");
  ScanResult result =
      scan([](const std::vector<Variable>& in) { return std::vector<Variable>{in[1] + in[0]}; },
           {x}, {constant(Tensor::scalar(0.0, DType::Float64))}, {}, {.go_backwards = true});
  Function f = function({x}, {result.outputs[0]});
  EXPECT_EQ(f({doubles({4}, {1, 2, 3, 4})})[0].to_doubles(), (std::vector<double>{4, 7, 9, 10}));
}

TEST(Scan, UntilStopsAfterTheFirstStepWhoseConditionHolds) {
  // Halve until below 1, at most 100 steps: 20, 10, 5, 2.5, 1.25, 0.625.
  Variable start = scalar(DType::Float64, "start");
  ScanResult halving = scan(
      [](const std::vector<Variable>& in) {
        Variable half = in[0] / 2.0;
        return std::vector<Variable>{half, in[0] - half, lt(half, 1.0)};
      },
      {}, {start, ScanOutput::none()}, {}, {.n_steps = 100, .name = "halve", .until = true});
  Function f = function({start}, halving.outputs);
  const auto out = f({Tensor::scalar(40.0, DType::Float64)});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{20, 10, 5, 2.5, 1.25, 0.625}));
  EXPECT_EQ(out[1].shape(), (Dims{6}));
  // The step count still bounds it: 3 steps.
  Function capped =
      function({start}, {scan(
                             [](const std::vector<Variable>& in) {
                               return std::vector<Variable>{in[0] / 2.0, lt(in[0], 0.0)};
                             },
                             {}, {start}, {}, {.n_steps = 3, .until = true})
                             .outputs[0]});
  EXPECT_EQ(capped({Tensor::scalar(8.0, DType::Float64)})[0].to_doubles(),
            (std::vector<double>{4, 2, 1}));
}

TEST(Scan, AStepMayReturnItsOwnStopCondition) {
  // As Theano's scan_module.until: no option, the step's ScanStep carries the condition.
  Variable start = scalar(DType::Float64, "start");
  ScanResult halving = scan(
      [](const std::vector<Variable>& in) {
        ScanStep step(std::vector<Variable>{in[0] / 2.0});
        step.until = lt(step.outputs[0], 1.0);
        return step;
      },
      {}, {start}, {}, {.n_steps = 100, .name = "halve"});
  Function f = function({start}, halving.outputs);
  EXPECT_EQ(f({Tensor::scalar(40.0, DType::Float64)})[0].to_doubles(),
            (std::vector<double>{20, 10, 5, 2.5, 1.25, 0.625}));
  // A condition that is no boolean or integer scalar is a TypeMismatch naming the loop.
  try {
    (void)scan(
        [](const std::vector<Variable>& in) {
          ScanStep step(std::vector<Variable>{in[0] / 2.0});
          step.until = in[0];
          return step;
        },
        {}, {start}, {}, {.n_steps = 5, .name = "halve"});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::TypeMismatch);
    EXPECT_NE(error.message().find("scan 'halve'"), std::string::npos) << error.message();
  }
}

// n_steps only bounds a while loop: INT64_MAX ("no limit") allocates rows for the steps that run.
TEST(Scan, UntilWithoutPracticalBoundGrowsItsStacks) {
  Variable start = scalar(DType::Int64, "start");
  ScanResult counting = scan(
      [](const std::vector<Variable>& in) {
        Variable next = in[0] + constant(Tensor::from_vector<std::int64_t>(Dims{}, {1}));
        return std::vector<Variable>{next, next + next, ge(next, 100)};
      },
      {}, {start, ScanOutput::none()}, {},
      {.n_steps = constant(
           Tensor::from_vector<std::int64_t>(Dims{}, {std::numeric_limits<std::int64_t>::max()})),
       .name = "count",
       .until = true});
  Function f = function({start}, counting.outputs);
  for (const std::int64_t first : {std::int64_t{0}, std::int64_t{90}}) {
    const auto out = f({Tensor::from_vector<std::int64_t>(Dims{}, {first})});
    const std::int64_t steps = 100 - first;
    ASSERT_EQ(out[0].shape(), (Dims{steps}));
    ASSERT_EQ(out[1].shape(), (Dims{steps}));
    for (std::int64_t i = 0; i < steps; ++i) {
      EXPECT_EQ(out[0].at(i), static_cast<double>(first + i + 1));
      EXPECT_EQ(out[1].at(i), static_cast<double>(2 * (first + i + 1)));
    }
  }
}

TEST(Scan, SharedAndOuterValuesAreCapturedAutomatically) {
  Variable w = shared(Tensor::scalar(2.0, DType::Float64), "w");
  Variable b = scalar(DType::Float64, "b");
  Variable outside = b * 10.0;  // computed once, before the loop
  Variable x = vector(DType::Float64, "x");
  ScanResult result = scan(
      [&](const std::vector<Variable>& in) {
        return std::vector<Variable>{in[1] * w + in[0] + outside};
      },
      {x}, {constant(Tensor::scalar(0.0, DType::Float64))});
  Function f = function({x, b}, {result.outputs[0]});
  EXPECT_EQ(f({doubles({3}, {1, 1, 1}), Tensor::scalar(1.0, DType::Float64)})[0].to_doubles(),
            (std::vector<double>{11, 33, 77}));
  w.set_value(Tensor::scalar(1.0, DType::Float64));
  EXPECT_EQ(f({doubles({3}, {1, 1, 1}), Tensor::scalar(0.0, DType::Float64)})[0].to_doubles(),
            (std::vector<double>{1, 2, 3}));
}

TEST(Scan, ScanInsideAScanStep) {
  // Outer loop over rows; each step sums its row with an inner loop, then accumulates.
  Variable m = matrix(DType::Float64, "m");
  ScanResult result = scan(
      [](const std::vector<Variable>& in) {
        ScanResult inner = scan(
            [](const std::vector<Variable>& row) { return std::vector<Variable>{row[1] + row[0]}; },
            {in[0]}, {constant(Tensor::scalar(0.0, DType::Float64))}, {}, {.name = "row_sum"});
        Variable row_total = subtensor(inner.outputs[0], {-1});
        return std::vector<Variable>{in[1] + row_total};
      },
      {m}, {constant(Tensor::scalar(0.0, DType::Float64))}, {}, {.name = "rows"});
  Function f = function({m}, {result.outputs[0]});
  EXPECT_EQ(f({doubles({3, 2}, {1, 2, 3, 4, 5, 6})})[0].to_doubles(),
            (std::vector<double>{3, 10, 21}));
}

TEST(Scan, ConcurrentCallsRunTheBodyInTheirOwnFrames) {
  Variable x = vector(DType::Float64, "x");
  ScanResult result = scan(
      [](const std::vector<Variable>& in) { return std::vector<Variable>{in[1] + in[0] * in[0]}; },
      {x}, {constant(Tensor::scalar(0.0, DType::Float64))});
  Function f = function({x}, {result.outputs[0]});
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int thread = 0; thread < 4; ++thread) {
    threads.emplace_back([&, thread] {
      for (int call = 0; call < 200; ++call) {
        const double value = thread + 1;
        const Tensor out = f({doubles({50}, std::vector<double>(50, value))})[0];
        if (out.at(49) != 50 * value * value) ++wrong;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Scan, StepsAllocateNothingInTheSteadyState) {
  Variable x = matrix(DType::Float32, "x");
  Variable w = shared(Tensor::full(DType::Float32, {8, 8}, 0.01), "w");
  ScanResult result = scan(
      [&](const std::vector<Variable>& in) {
        return std::vector<Variable>{tanh(dot(in[1], w) + in[0])};
      },
      {x}, {constant(Tensor::zeros(DType::Float32, {8}))});
  Function f = function({x}, {result.outputs[0]});
  auto allocations_for = [&](std::int64_t steps) {
    const Tensor input = Tensor::full(DType::Float32, {steps, 8}, 0.5);
    (void)f({input});  // warm: the body's buffers exist afterwards
    const std::int64_t before = default_allocator().stats().allocation_count;
    (void)f({input});
    return default_allocator().stats().allocation_count - before;
  };
  const std::int64_t short_loop = allocations_for(10);
  const std::int64_t long_loop = allocations_for(1000);
  EXPECT_EQ(long_loop, short_loop) << "allocations grow with the step count";
}

TEST(ScanErrors, StepOutputTypeMustMatchItsInitialState) {
  Variable x = vector(DType::Float32, "x");
  try {
    (void)scan(
        [](const std::vector<Variable>& in) {
          return std::vector<Variable>{cast(in[1], DType::Float64) + 1.0};
        },
        {x}, {constant(Tensor::scalar(0.0, DType::Float32))}, {}, {.name = "bad_step"});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::TypeMismatch);
    const std::string text = error.what();
    EXPECT_NE(text.find("scan 'bad_step'"), std::string::npos) << text;
    EXPECT_NE(text.find("step output 0 is TensorType(float64, ())"), std::string::npos) << text;
    EXPECT_NE(text.find("outputs_info[0]"), std::string::npos) << text;
  }
}

TEST(ScanErrors, SequenceTooShortAndNegativeStepCountAtRunTime) {
  Variable x = vector(DType::Float64, "x");
  Variable n = scalar(DType::Int64, "n");
  ScanResult result =
      scan([](const std::vector<Variable>& in) { return std::vector<Variable>{in[0] + in[1]}; },
           {ScanSequence(x, {0, 2})}, {ScanOutput::none()}, {}, {.n_steps = n, .name = "window"});
  Function f = function({x, n}, {result.outputs[0]});
  EXPECT_EQ(f({doubles({4}, {1, 2, 3, 4}), Tensor::scalar(2, DType::Int64)})[0].to_doubles(),
            (std::vector<double>{4, 6}));
  try {
    (void)f({doubles({4}, {1, 2, 3, 4}), Tensor::scalar(3, DType::Int64)});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    const std::string text = error.what();
    EXPECT_NE(text.find("scan 'window': sequence 0 has 4 entries"), std::string::npos) << text;
    EXPECT_NE(text.find("3 steps with taps [0, 2] read 5"), std::string::npos) << text;
  }
  try {
    (void)f({doubles({4}, {1, 2, 3, 4}), Tensor::scalar(-1, DType::Int64)});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(error.what()).find("n_steps is -1; it must be >= 0"), std::string::npos);
  }
}

TEST(ScanErrors, StepOutputShapeThatDiffersFromTheStateAtRunTime) {
  Variable h0 = vector(DType::Float64, "h0");
  Variable v = vector(DType::Float64, "v");
  ScanResult result =
      scan([&](const std::vector<Variable>& in) { return std::vector<Variable>{sum(in[0]) + v}; },
           {}, {h0}, {}, {.n_steps = 3, .name = "grow"});
  Function f = function({h0, v}, {result.outputs[0]});
  try {
    (void)f({doubles({2}, {1, 2}), doubles({3}, {1, 2, 3})});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    const std::string text = error.what();
    EXPECT_NE(text.find("scan 'grow': output 0 of the step has shape (3,) at step 0"),
              std::string::npos)
        << text;
  }
}

TEST(ScanErrors, TapsThatCannotWork) {
  Variable x = vector(DType::Float64, "x");
  Variable zero = constant(Tensor::scalar(0.0, DType::Float64));
  auto identity = [](const std::vector<Variable>& in) {
    return std::vector<Variable>{in.empty() ? constant(Tensor::scalar(1.0)) : in[0]};
  };
  EXPECT_THROW((void)scan(identity, {}, {ScanOutput(zero, {0})}, {}, {.n_steps = 2}), Error);
  EXPECT_THROW((void)scan(identity, {ScanSequence(x, {1, 1})}, {ScanOutput::none()}), Error);
  EXPECT_THROW((void)scan(identity, {}, {ScanOutput::none()}), Error);  // no steps, no sequence
  EXPECT_THROW((void)scan(identity, {}, {ScanOutput::none()}, {}, {.n_steps = -2}), Error);
}

// Gradients through loops of several shapes against finite differences.
struct GradCase {
  std::string name;
  std::function<Variable(const std::vector<Variable>&)> build;
  std::vector<Tensor> point;
};

std::vector<GradCase> grad_cases() {
  std::vector<GradCase> cases;
  cases.push_back({"rnn",
                   [](const std::vector<Variable>& in) {
                     // in: x (steps, batch, features), h0 (batch, hidden), W, U
                     const Variable& w = in[2];
                     const Variable& u = in[3];
                     return scan(
                                [&](const std::vector<Variable>& s) {
                                  return std::vector<Variable>{tanh(dot(s[0], w) + dot(s[1], u))};
                                },
                                {in[0]}, {in[1]})
                         .outputs[0];
                   },
                   {random_doubles({4, 2, 3}, 1), random_doubles({2, 3}, 2),
                    random_doubles({3, 3}, 3), random_doubles({3, 3}, 4)}});
  cases.push_back({"state_taps",
                   [](const std::vector<Variable>& in) {
                     // f[t] = a * f[t-1] * f[t-3] + x[t]
                     return scan(
                                [&](const std::vector<Variable>& s) {
                                  return std::vector<Variable>{s[3] * s[2] * s[1] + s[0]};
                                },
                                {in[0]}, {ScanOutput(in[1], {-3, -1})}, {in[2]})
                         .outputs[0];
                   },
                   {random_doubles({5, 2}, 5), random_doubles({3, 2}, 6), random_doubles({2}, 7)}});
  cases.push_back({"sequence_taps_and_plain_outputs",
                   [](const std::vector<Variable>& in) {
                     ScanResult r = scan(
                         [&](const std::vector<Variable>& s) {
                           // s: x[t-1], x[t+1], h[t-1]
                           Variable h = sin(s[2]) + s[0] * s[1];
                           return std::vector<Variable>{h, exp(s[1]) * h};
                         },
                         {ScanSequence(in[0], {-1, 1})}, {in[1], ScanOutput::none()});
                     return r.outputs[0] * 2.0 + r.outputs[1];
                   },
                   {random_doubles({6, 3}, 8), random_doubles({3}, 9)}});
  cases.push_back({"go_backwards_with_sequence_taps",
                   [](const std::vector<Variable>& in) {
                     return scan(
                                [&](const std::vector<Variable>& s) {
                                  return std::vector<Variable>{s[2] * s[0] + s[1] * in[2]};
                                },
                                {ScanSequence(in[0], {0, 2})}, {in[1]}, {}, {.go_backwards = true})
                         .outputs[0];
                   },
                   {random_doubles({6, 2}, 10), random_doubles({2}, 11), random_doubles({2}, 12)}});
  cases.push_back({"explicit_step_count_shorter_than_the_sequence",
                   [](const std::vector<Variable>& in) {
                     return scan(
                                [&](const std::vector<Variable>& s) {
                                  return std::vector<Variable>{s[1] * s[0] + s[0]};
                                },
                                {in[0]}, {in[1]}, {}, {.n_steps = 3})
                         .outputs[0];
                   },
                   {random_doubles({5}, 13), random_doubles({}, 14)}});
  cases.push_back(
      {"while_loop_that_stops_early",
       [](const std::vector<Variable>& in) {
         // A counter stops the loop after 3 of the 5 rows.
         const Variable zero = constant(Tensor::scalar(0.0, DType::Float64));
         ScanResult r = scan(
             [&](const std::vector<Variable>& s) {
               // s: x[t], h[t-1], count[t-1]
               Variable count = s[2] + 1.0;
               return std::vector<Variable>{tanh(s[1] * in[2] + s[0]), count, ge(count, 3.0)};
             },
             {in[0]}, {in[1], zero}, {}, {.until = true});
         return r.outputs[0];
       },
       {random_doubles({5, 2}, 18), random_doubles({2}, 19), random_doubles({2}, 21)}});
  cases.push_back({"random_draw_in_the_step",
                   [](const std::vector<Variable>& in) {
                     // Noise drawn every step; without the loop's updates each evaluation
                     // starts from the same state, so the function is deterministic.
                     RandomStream rng(5);
                     const Variable& w = in[2];
                     return scan(
                                [&](const std::vector<Variable>& s) {
                                  Variable noise = rng.normal(1.0, 0.1, {2}, DType::Float64);
                                  return std::vector<Variable>{tanh(s[0] * w + s[1]) * noise};
                                },
                                {in[0]}, {in[1]})
                         .outputs[0];
                   },
                   {random_doubles({4, 2}, 22), random_doubles({2}, 23), random_doubles({2}, 24)}});
  cases.push_back({"second_derivative",
                   [](const std::vector<Variable>& in) {
                     const Variable& w = in[1];
                     Variable h = scan(
                                      [&](const std::vector<Variable>& s) {
                                        return std::vector<Variable>{tanh(s[0] * w + s[1] * w)};
                                      },
                                      {in[0]}, {in[2]})
                                      .outputs[0];
                     return grad(sum(h * h), {w})[0];
                   },
                   {random_doubles({4, 2}, 15), random_doubles({2}, 16), random_doubles({2}, 17)}});
  return cases;
}

TEST(ScanGrad, MatchesFiniteDifferencesOverATableOfLoops) {
  for (const GradCase& grad_case : grad_cases()) {
    SCOPED_TRACE(grad_case.name);
    const VerifyGradResult result = verify_grad(grad_case.build, grad_case.point);
    EXPECT_TRUE(result.ok) << result.message;
  }
}

TEST(ScanGrad, TheGradientIsALoopNamedAfterTheForwardOne) {
  Variable x = vector(DType::Float64, "x");
  Variable w = shared(Tensor::scalar(0.5, DType::Float64), "w");
  Variable h =
      scan([&](const std::vector<Variable>& s) { return std::vector<Variable>{s[1] * w + s[0]}; },
           {x}, {constant(Tensor::scalar(0.0, DType::Float64))}, {}, {.name = "decay"})
          .outputs[0];
  Variable gw = grad(sum(h), {w})[0];
  Function f = function({x}, {gw});
  bool found = false;
  for (const ApplyNode* node : f.graph().toposort()) {
    found = found || node->op_string() == "Scan{grad_of_decay}";
  }
  EXPECT_TRUE(found);
  // h = [1, 1.5, 1.75]; dh[t]/dw = h[t-1] + w dh[t-1]/dw = [0, 1, 2], summed 3.
  EXPECT_NEAR(f({doubles({3}, {1, 1, 1})})[0].at(0), 3.0, 1e-12);
}

// Loop rewrites: both change where work happens, never the results.
TEST(ScanRewrite, InvariantWorkLeavesTheLoop) {
  Variable x = matrix(DType::Float64, "x");
  Variable w = shared(random_doubles({3, 3}, 30), "w");
  // w passed as a non-sequence: the step sees a placeholder, and transpose(w) * 2, which reads
  // only it, is computed at every step unless hoisted. (A value the step builds from w itself
  // is computed outside from the start.)
  ScanResult loop = scan(
      [&](const std::vector<Variable>& in) {
        return std::vector<Variable>{tanh(dot(in[1], transpose(in[2]) * 2.0) + in[0])};
      },
      {x}, {constant(Tensor::zeros(DType::Float64, {3}))}, {w}, {.name = "rnn"});
  auto compiled = [&](std::vector<std::string> excluded) {
    FunctionOptions options;
    options.profile = true;
    options.excluded_rewrites = std::move(excluded);
    return function({x}, {loop.outputs[0]}, {}, options);
  };
  Function hoisted = compiled({});
  Function kept = compiled({"hoist_loop_invariants"});
  const Tensor xs = random_doubles({5, 3}, 31);
  EXPECT_TRUE(all_close(hoisted({xs})[0], kept({xs})[0], 1e-12, 1e-12));
  const profile::FunctionRecord with = hoisted.profile_record();
  const profile::FunctionRecord without = kept.profile_record();
  ASSERT_EQ(with.loops.size(), 1u);
  ASSERT_EQ(without.loops.size(), 1u);
  EXPECT_LT(with.loops[0].body.nodes.size(), without.loops[0].body.nodes.size());
  bool reported = false;
  for (const profile::RewriteRecord& rule : with.compile.rewrites) {
    if (rule.name == "hoist_loop_invariants") reported = rule.applied_count == 1;
  }
  EXPECT_TRUE(reported);
  // Left in the loop, the invariant nodes are named by a tip; hoisted, they are not.
  EXPECT_TRUE(with.loops[0].invariant_nodes.empty());
  ASSERT_FALSE(without.loops[0].invariant_nodes.empty());
  auto tip_rules = [](const profile::FunctionRecord& record) {
    profile::Profile profile;
    profile.functions = {record};
    std::vector<std::string> rules;
    for (const profile::Tip& tip : profile::collect_tips(profile)) rules.push_back(tip.rule);
    return rules;
  };
  const std::vector<std::string> kept_rules = tip_rules(without);
  EXPECT_NE(std::find(kept_rules.begin(), kept_rules.end(), "loop_invariant"), kept_rules.end());
  const std::vector<std::string> hoisted_rules = tip_rules(with);
  EXPECT_EQ(std::find(hoisted_rules.begin(), hoisted_rules.end(), "loop_invariant"),
            hoisted_rules.end());
}

// Per-step work on a sequence row and loop-invariant values moves before the loop, computed for
// every row at once; forwards, backwards, with taps, with broadcasting, and through grad.
TEST(ScanRewrite, SequenceWorkLeavesTheLoop) {
  Variable x = tensor3(DType::Float64, "x");  // (steps, batch, in)
  Variable v = matrix(DType::Float64, "v");   // (steps, 3)
  Variable w = shared(random_doubles({4, 3}, 40), "w");
  Variable u = shared(random_doubles({3, 3}, 41), "u");
  Variable m = shared(random_doubles({2, 3}, 42), "m");
  Variable c = shared(random_doubles({3}, 43), "c");
  const Variable h0 = constant(Tensor::zeros(DType::Float64, {2, 3}));
  // h[t] = tanh(x[t] . w + h[t-1] . u): x[t] . w leaves as one product over all rows.
  Variable rnn = scan(
                     [&](const std::vector<Variable>& in) {
                       return std::vector<Variable>{tanh(dot(in[0], w) + dot(in[1], u))};
                     },
                     {x}, {h0}, {}, {.name = "rnn"})
                     .outputs[0];
  // Backwards over v with taps {-1, 1}: exp(v[t-1]) * 2 + v[t+1] . u, and a plain output
  // summing v[t-1] broadcast against the matrix m.
  ScanResult taps = scan(
      [&](const std::vector<Variable>& in) {
        Variable g = sin(in[2]) + exp(in[0]) * 2.0 + dot(in[1], u) * c;
        return std::vector<Variable>{g, sum(in[0] + m)};
      },
      {ScanSequence(v, {-1, 1})},
      {constant(Tensor::zeros(DType::Float64, {3})), ScanOutput::none()}, {},
      {.name = "taps", .go_backwards = true});
  Variable cost = sum(rnn * rnn) + sum(taps.outputs[0]) + sum(taps.outputs[1]);
  std::vector<Variable> outputs{rnn, taps.outputs[0], taps.outputs[1]};
  for (const Variable& g : grad(cost, {w, u, m, c, x, v})) outputs.push_back(g);
  auto compiled = [&](std::vector<std::string> excluded) {
    FunctionOptions options;
    options.profile = true;
    options.excluded_rewrites = std::move(excluded);
    return function({x, v}, outputs, {}, options);
  };
  Function pushed = compiled({});
  Function kept = compiled({"push_out_sequence_work"});
  const Tensor xs = random_doubles({5, 2, 4}, 44);
  const Tensor vs = random_doubles({6, 3}, 45);
  const std::vector<Tensor> got = pushed({xs, vs});
  const std::vector<Tensor> expected = kept({xs, vs});
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_TRUE(all_close(got[i], expected[i], 1e-10, 1e-10));
  }
  std::int64_t applied = 0;
  for (const profile::RewriteRecord& rule : pushed.profile_record().compile.rewrites) {
    if (rule.name == "push_out_sequence_work") applied = rule.applied_count;
  }
  // Both forward loops and the backward loops that redo their steps.
  EXPECT_GE(applied, 2);
  std::size_t pushed_body = 0, kept_body = 0;
  for (const auto& loop : pushed.profile_record().loops) pushed_body += loop.body.nodes.size();
  for (const auto& loop : kept.profile_record().loops) kept_body += loop.body.nodes.size();
  EXPECT_LT(pushed_body, kept_body);
}

// A while loop keeps its sequence work: it may stop long before its sequence ends.
TEST(ScanRewrite, WhileLoopKeepsItsSequenceWork) {
  Variable x = vector(DType::Float64, "x");
  ScanResult loop = scan(
      [&](const std::vector<Variable>& in) {
        Variable next = in[1] + exp(in[0]);
        return std::vector<Variable>{next, ge(next, 3.0)};
      },
      {x}, {constant(Tensor::scalar(0.0, DType::Float64))}, {}, {.until = true});
  FunctionOptions options;
  options.profile = true;
  Function f = function({x}, {loop.outputs[0]}, {}, options);
  (void)f({random_doubles({8}, 46)});
  for (const profile::RewriteRecord& rule : f.profile_record().compile.rewrites) {
    if (rule.name == "push_out_sequence_work") {
      EXPECT_EQ(rule.applied_count, 0);
    }
  }
}

TEST(ScanTips, StepsTooSmallForTheirOverheadAreNamed) {
  // A tiny body (one scalar add per step) against a body with real work per step: two
  // (400,) x (400, 400) products, far above the step overhead even in a sanitized build.
  auto loop_record = [](std::int64_t width) {
    Variable x = matrix(DType::Float64, "x");
    Variable w = shared(random_doubles({width, width}, 40), "w");
    ScanResult loop = scan(
        [&](const std::vector<Variable>& in) {
          return std::vector<Variable>{width == 1 ? in[1] + in[0]
                                                  : tanh(dot(dot(in[1], w), w) + in[0])};
        },
        {x}, {constant(Tensor::zeros(DType::Float64, {width}))}, {}, {.name = "loop"});
    FunctionOptions options;
    options.profile = true;
    Function f = function({x}, {loop.outputs[0]}, {}, options);
    // The tiny loop's call lasts tens of microseconds, so one preemption inside a timed kernel
    // (tests run side by side on few cores) could outweigh its overhead: time many calls.
    const int calls = width == 1 ? 100 : 1;
    const Tensor sequence = random_doubles({200, width}, 41);
    for (int call = 0; call < calls; ++call) (void)f({sequence});
    profile::Profile profile;
    profile.functions = {f.profile_record()};
    std::vector<profile::Tip> tips = profile::collect_tips(profile);
    const std::string steps = "over " + std::to_string(200 * calls) + " steps";
    return std::any_of(tips.begin(), tips.end(), [&](const profile::Tip& tip) {
      return tip.rule == "loop_overhead" && tip.text.find("Scan{loop}:") != std::string::npos &&
             tip.text.find(steps) != std::string::npos;
    });
  };
  EXPECT_TRUE(loop_record(1));
  EXPECT_FALSE(loop_record(400));
}

TEST(ScanRewrite, LoopsOverTheSameSequencesMerge) {
  Variable x = vector(DType::Float64, "x");
  const Variable zero = constant(Tensor::scalar(0.0, DType::Float64));
  const Variable one = constant(Tensor::scalar(1.0, DType::Float64));
  auto sums =
      scan([](const std::vector<Variable>& in) { return std::vector<Variable>{in[1] + in[0]}; },
           {x}, {zero}, {}, {.name = "cumsum"});
  auto products =
      scan([](const std::vector<Variable>& in) { return std::vector<Variable>{in[1] * in[0]}; },
           {x}, {one}, {}, {.name = "cumprod"});
  // A third loop over x reads the first one's result: it cannot run in lockstep with it.
  const Variable total = sum(sums.outputs[0]);
  auto reader =
      scan([&](const std::vector<Variable>& in) { return std::vector<Variable>{in[0] * total}; },
           {x}, {ScanOutput::none()}, {}, {.name = "scaled"});
  const std::vector<Variable> outputs = {sums.outputs[0], products.outputs[0], reader.outputs[0]};
  Function merged = function({x}, outputs);
  FunctionOptions options;
  options.excluded_rewrites = {"merge_sibling_loops"};
  Function apart = function({x}, outputs, {}, options);
  std::vector<std::string> loops;
  for (const ApplyNode* node : merged.graph().toposort()) {
    if (node->op().name == "Scan") loops.push_back(node->op_string());
  }
  std::sort(loops.begin(), loops.end());
  EXPECT_EQ(loops, (std::vector<std::string>{"Scan{cumsum&cumprod}", "Scan{scaled}"}));
  const Tensor xs = doubles({4}, {1, 2, 3, 4});
  const auto together = merged({xs});
  const auto separately = apart({xs});
  for (std::size_t i = 0; i < together.size(); ++i) {
    EXPECT_EQ(together[i].to_doubles(), separately[i].to_doubles()) << "output " << i;
  }
  EXPECT_EQ(together[1].to_doubles(), (std::vector<double>{1, 2, 6, 24}));
}

TEST(ScanRewrite, OutputReadOnlyAtItsLastStepIsNotStacked) {
  Variable x = matrix(DType::Float64, "x");
  ScanResult loop = scan(
      [](const std::vector<Variable>& in) { return std::vector<Variable>{in[1] * 0.5 + in[0]}; },
      {x}, {constant(Tensor::zeros(DType::Float64, {2}))}, {}, {.name = "decay"});
  const Variable last = subtensor(loop.outputs[0], {-1});
  FunctionOptions options;
  Function ring = function({x}, {last}, {}, options);
  options.excluded_rewrites = {"keep_last_steps_only"};
  Function stacked = function({x}, {last}, {}, options);
  const Tensor xs = random_doubles({7, 2}, 32);
  EXPECT_TRUE(all_close(ring({xs})[0], stacked({xs})[0], 1e-12, 1e-12));
  // The loop's output is now the result itself, of rank 1.
  const Variable result = ring.graph().outputs()[0];
  ASSERT_NE(result.owner(), nullptr);
  EXPECT_EQ(result.owner()->op().name, "Scan");
  EXPECT_EQ(result.rank(), 1);
  // Zero steps: the initial state is the last value.
  EXPECT_EQ(ring({Tensor::zeros(DType::Float64, {0, 2})})[0].to_doubles(),
            (std::vector<double>{0, 0}));
  // A reader of every step keeps the stack.
  Function both = function({x}, {last, loop.outputs[0]});
  EXPECT_EQ(both({xs})[1].shape(), (Dims{7, 2}));
}

TEST(ScanTrace, StepsAndBodyNodesNestUnderTheLoopNode) {
  profile::reset_trace();
  profile::set_tracing(true);
  Variable x = vector(DType::Float64, "x");
  ScanResult loop = scan(
      [](const std::vector<Variable>& in) { return std::vector<Variable>{in[1] + exp(in[0])}; },
      {x}, {constant(Tensor::scalar(0.0, DType::Float64))}, {}, {.name = "traced"});
  FunctionOptions options;
  options.profile = true;
  Function f = function({x}, {loop.outputs[0]}, {}, options);
  (void)f({random_doubles({4}, 50)});
  const profile::TraceRecord trace = profile::snapshot_trace();
  profile::set_tracing(false);
  profile::reset_trace();
  const profile::TraceSliceRecord* loop_slice = nullptr;
  std::vector<const profile::TraceSliceRecord*> steps;
  std::int64_t body_nodes = 0;
  for (const profile::TraceSliceRecord& slice : trace.slices) {
    const profile::TraceLabelRecord& label = trace.labels[static_cast<std::size_t>(slice.label)];
    if (label.name.rfind("Scan{traced}", 0) == 0) loop_slice = &slice;
    if (label.name == "traced step") steps.push_back(&slice);
    if (label.category == "node" && label.name.find("exp") != std::string::npos) ++body_nodes;
  }
  ASSERT_NE(loop_slice, nullptr);
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_GE(body_nodes, 4);
  for (const profile::TraceSliceRecord* step : steps) {
    EXPECT_GE(step->start_ns, loop_slice->start_ns);
    EXPECT_LE(step->start_ns + step->duration_ns, loop_slice->start_ns + loop_slice->duration_ns);
  }
}

// The loop's profile: steps, overhead parts, the body's nodes, ignore_first_call, nesting, JSON.
TEST(ScanProfile, BodyProfileNestsUnderTheLoopNode) {
  Variable m = matrix(DType::Float64, "m");
  ScanResult result = scan(
      [](const std::vector<Variable>& in) {
        ScanResult inner = scan(
            [](const std::vector<Variable>& row) {
              // exp reads the state: it stays in the body (x[t] alone would leave the loop).
              return std::vector<Variable>{row[1] + exp(row[0] - row[1])};
            },
            {in[0]}, {constant(Tensor::scalar(0.0, DType::Float64))}, {}, {.name = "row_sum"});
        return std::vector<Variable>{in[1] + subtensor(inner.outputs[0], {-1})};
      },
      {m}, {constant(Tensor::scalar(0.0, DType::Float64))}, {}, {.name = "rows"});
  FunctionOptions options;
  options.profile = true;
  options.ignore_first_call = true;
  options.name = "nested";
  Function f = function({m}, {result.outputs[0]}, {}, options);
  for (int call = 0; call < 3; ++call) (void)f({random_doubles({5, 4}, 20)});

  const profile::FunctionRecord record = f.profile_record();
  ASSERT_EQ(record.loops.size(), 1u);
  const profile::LoopRecord& rows = record.loops[0];
  EXPECT_EQ(rows.name, "rows");
  EXPECT_EQ(rows.call_count, 2);  // the first call dropped, as the function's own timings
  EXPECT_EQ(rows.step_count, 10);
  EXPECT_EQ(rows.body.call_count, 10);
  EXPECT_GT(rows.call_ns, 0);
  EXPECT_GE(rows.call_ns, rows.vm_ns + rows.bind_ns + rows.store_ns);
  EXPECT_LE(rows.step_min_ns, rows.step_median_ns);
  EXPECT_LE(rows.step_median_ns, rows.step_max_ns * 11 / 10);
  EXPECT_EQ(record.nodes[static_cast<std::size_t>(rows.topo_index)].op_name, "Scan{rows}");
  ASSERT_EQ(rows.body.loops.size(), 1u);
  const profile::LoopRecord& row_sum = rows.body.loops[0];
  EXPECT_EQ(row_sum.name, "row_sum");
  EXPECT_EQ(row_sum.call_count, 10);
  EXPECT_EQ(row_sum.step_count, 40);
  bool exp_seen = false;
  for (const profile::NodeRecord& node : row_sum.body.nodes) {
    if (node.op_kind == "Exp" || node.op_kind == "Composite") {
      exp_seen = true;
      EXPECT_EQ(node.call_count, 40);
      EXPECT_NE(node.source_site.find("scan_test.cpp"), std::string::npos);
    }
  }
  EXPECT_TRUE(exp_seen);

  profile::Profile profile;
  profile.functions = {record};
  const std::string text = profile::render_text(profile);
  EXPECT_NE(text.find("Scan Op profiling [1] ( rows )"), std::string::npos) << text;
  EXPECT_NE(text.find("Scan Op profiling [1.1] ( row_sum )"), std::string::npos) << text;
  EXPECT_NE(text.find("Time in 10 calls of the op (for a total of 40 steps)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("Slicing sequences, binding the body's inputs"), std::string::npos);
  EXPECT_LT(text.find("[1] ( rows )"), text.find("[1.1] ( row_sum )"));

  // JSON keeps the nesting, and the report re-renders byte for byte.
  const profile::ProfileDocument document =
      profile::parse_profile_json(profile::to_json_text({profile}, {}), "scan.json");
  ASSERT_EQ(document.profiles.size(), 1u);
  ASSERT_EQ(document.profiles[0].functions[0].loops.size(), 1u);
  EXPECT_EQ(document.profiles[0].functions[0].loops[0].body.loops[0].step_count, 40);
  EXPECT_EQ(profile::render_text(document.profiles[0]), text);

  // Folded stacks (and the HTML flame graph) nest each body under its loop node.
  bool nested_stack = false;
  for (const profile::FoldedStack& stack : profile::folded_stacks(profile)) {
    nested_stack = nested_stack || (stack.frames.size() == 7 && stack.frames[0] == "nested" &&
                                    stack.frames[2].rfind("Scan{rows}", 0) == 0 &&
                                    stack.frames[4].rfind("Scan{row_sum}", 0) == 0);
  }
  EXPECT_TRUE(nested_stack) << profile::render_folded(profile);

  // Profiles merged from two runs of the function show each loop once, with both runs' figures;
  // the at-exit sum of several profiles leaves the loops to each profile's own report.
  profile::Profile twice;
  twice.functions = {record, record};
  const std::string merged = profile::render_text(twice);
  EXPECT_NE(merged.find("Time in 4 calls of the op (for a total of 20 steps)"), std::string::npos)
      << merged;
  EXPECT_EQ(merged.find("Scan Op profiling [2]"), std::string::npos);
  const std::string at_exit = profile::render_profiles({profile, profile}, {});
  std::size_t sections = 0;
  for (std::size_t at = at_exit.find("( rows )"); at != std::string::npos;
       at = at_exit.find("( rows )", at + 1)) {
    ++sections;
  }
  EXPECT_EQ(sections, 2u);
}

}  // namespace
}  // namespace tscope
