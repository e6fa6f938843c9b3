// SPDX-License-Identifier: Apache-2.0
// Updates made inside a loop's step (Theano's scan updates): a step's own updates of shared
// variables and its random draws are carried from step to step and come back as the loop's
// updates.
#include "support/test_util.h"
#include "tscope/ops/random.h"

namespace tscope {
namespace {

Tensor doubles(const Dims& shape, const std::vector<double>& values) {
  return Tensor::from_doubles(DType::Float64, shape, values);
}

std::int64_t counter_of(const Variable& state) { return state.get_value().data<std::int64_t>()[1]; }

TEST(ScanUpdates, StepUpdateIsCarriedAndComesBackAsTheLoopsUpdate) {
  // y[t] = x[t] * c, then c = c + 1: each step reads the previous step's counter.
  Variable c = shared(Tensor::scalar(10.0, DType::Float64), "c");
  Variable x = vector(DType::Float64, "x");
  ScanResult result = scan(
      [&](const std::vector<Variable>& in) {
        return ScanStep({in[0] * c}, {{c, c + 1.0}});
      },
      {x}, {ScanOutput::none()}, {}, {.name = "count"});
  ASSERT_EQ(result.outputs.size(), 1u);
  ASSERT_EQ(result.updates.size(), 1u);
  EXPECT_EQ(result.updates[0].shared.node(), c.node());
  Function f = function({x}, {result.outputs[0]}, result.updates);
  EXPECT_EQ(f({doubles({3}, {1, 1, 2})})[0].to_doubles(), (std::vector<double>{10, 11, 24}));
  EXPECT_EQ(c.get_value().to_doubles(), (std::vector<double>{13}));
  // The next call starts from the value the last one left.
  EXPECT_EQ(f({doubles({2}, {1, 1})})[0].to_doubles(), (std::vector<double>{13, 14}));
  EXPECT_EQ(c.get_value().to_doubles(), (std::vector<double>{15}));
  // Without the updates the loop still counts inside the call, and c stays.
  Function no_updates = function({x}, {result.outputs[0]});
  EXPECT_EQ(no_updates({doubles({2}, {1, 1})})[0].to_doubles(), (std::vector<double>{15, 16}));
  EXPECT_EQ(c.get_value().to_doubles(), (std::vector<double>{15}));
}

TEST(ScanUpdates, EachStepDrawsFreshSamplesLikeSuccessiveCalls) {
  // The loop's draw at step t equals the t-th call of a function that draws once and applies
  // its stream's updates: the state advances by the draw's size every step.
  constexpr int kSteps = 4;
  RandomStream rng(7);
  Variable mean = vector(DType::Float64, "mean");
  ScanResult result = scan(
      [&](const std::vector<Variable>& in) {
        return std::vector<Variable>{in[0] + rng.normal(0.0, 1.0, {3}, DType::Float64)};
      },
      {}, {ScanOutput::none()}, {mean}, {.n_steps = kSteps, .name = "noisy"});
  ASSERT_EQ(result.updates.size(), 1u);
  ASSERT_EQ(rng.state_updates().size(), 1u);
  const Variable state = rng.state_updates()[0].shared;
  // The stream's own entry now names the loop's final state, so either list works.
  EXPECT_EQ(rng.state_updates()[0].new_value.node(), result.updates[0].new_value.node());
  std::vector<Update> updates;
  for (const RandomStateUpdate& u : rng.state_updates()) updates.push_back({u.shared, u.new_value});
  Function f = function({mean}, {result.outputs[0]}, updates);
  const Tensor zeros = doubles({3}, {0, 0, 0});
  const std::vector<double> looped = f({zeros})[0].to_doubles();
  EXPECT_EQ(counter_of(state), kSteps * 3);

  RandomStream same_seed(7);
  Variable once = same_seed.normal(0.0, 1.0, {3}, DType::Float64);
  std::vector<Update> once_updates;
  for (const RandomStateUpdate& u : same_seed.state_updates()) {
    once_updates.push_back({u.shared, u.new_value});
  }
  Function draw = function({}, {once}, once_updates);
  std::vector<double> called;
  for (int t = 0; t < kSteps; ++t) {
    const std::vector<double> row = draw({})[0].to_doubles();
    called.insert(called.end(), row.begin(), row.end());
  }
  EXPECT_EQ(looped, called);
  // The second call goes on where the first stopped.
  const std::vector<double> second = f({zeros})[0].to_doubles();
  EXPECT_NE(second, looped);
  EXPECT_EQ(counter_of(state), 2 * kSteps * 3);
}

TEST(ScanUpdates, DrawsInANestedLoopAdvanceThroughBothLoops) {
  RandomStream rng(3);
  ScanResult result = scan(
      [&](const std::vector<Variable>&) {
        ScanResult inner = scan(
            [&](const std::vector<Variable>&) {
              return std::vector<Variable>{rng.uniform(0.0, 1.0, {2}, DType::Float64)};
            },
            {}, {ScanOutput::none()}, {}, {.n_steps = 5, .name = "inner"});
        EXPECT_EQ(inner.updates.size(), 1u);
        return ScanStep({sum(inner.outputs[0])}, inner.updates);
      },
      {}, {ScanOutput::none()}, {}, {.n_steps = 3, .name = "outer"});
  // The inner loop's update is the step's own update and its draw at once: listed once.
  ASSERT_EQ(result.updates.size(), 1u);
  Function f = function({}, {result.outputs[0]}, result.updates);
  const std::vector<double> sums = f({})[0].to_doubles();
  ASSERT_EQ(sums.size(), 3u);
  EXPECT_NE(sums[0], sums[1]);
  EXPECT_EQ(counter_of(rng.state_updates()[0].shared), 3 * 5 * 2);
}

TEST(ScanUpdates, WhileLoopLeavesTheStateOfItsLastStep) {
  Variable total = shared(Tensor::scalar(0.0, DType::Float64), "total");
  Variable x = vector(DType::Float64, "x");
  ScanResult result = scan(
      [&](const std::vector<Variable>& in) {
        Variable next = total + in[0];
        return ScanStep({next, ge(next, 5.0)}, {{total, next}});
      },
      {x}, {ScanOutput::none()}, {}, {.name = "until_five", .until = true});
  Function f = function({x}, {result.outputs[0]}, result.updates);
  EXPECT_EQ(f({doubles({5}, {1, 2, 3, 4, 5})})[0].to_doubles(), (std::vector<double>{1, 3, 6}));
  EXPECT_EQ(total.get_value().to_doubles(), (std::vector<double>{6}));
}

TEST(ScanUpdates, UpdatedStateAloneIsNotStacked) {
  // Nothing reads the counter's every-step values, so the rewrite keeps its last step only.
  Variable c = shared(Tensor::scalar(0.0, DType::Float64), "c");
  Variable x = vector(DType::Float64, "x");
  ScanResult result = scan(
      [&](const std::vector<Variable>& in) {
        return ScanStep({in[0] + c}, {{c, c + 1.0}});
      },
      {x}, {ScanOutput::none()});
  Function f = function({x}, {result.outputs[0]}, result.updates);
  for (const auto& node : f.graph().toposort()) {
    EXPECT_NE(node->op_string(), "Subtensor{-1}") << node->to_string();
  }
  EXPECT_EQ(f({doubles({3}, {0, 0, 0})})[0].to_doubles(), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(c.get_value().to_doubles(), (std::vector<double>{3}));
}

TEST(ScanUpdates, BadUpdatesNameTheLoop) {
  Variable c = shared(Tensor::scalar(0.0, DType::Float64), "c");
  Variable x = vector(DType::Float64, "x");
  const auto error_of = [&](const ScanStepFn& step) -> std::string {
    try {
      (void)scan(step, {x}, {ScanOutput::none()}, {}, {.name = "bad_updates"});
    } catch (const Error& error) {
      return error.what();
    }
    return "no error";
  };
  std::string text = error_of([&](const std::vector<Variable>& in) {
    return ScanStep({in[0]}, {{x, in[0]}});
  });
  EXPECT_NE(text.find("scan 'bad_updates': the step updates 'x', which is not a shared variable"),
            std::string::npos)
      << text;
  text = error_of([&](const std::vector<Variable>& in) {
    return ScanStep({in[0]}, {{c, c + 1.0}, {c, c + 2.0}});
  });
  EXPECT_NE(text.find("updates shared variable 'c' twice"), std::string::npos) << text;
  text = error_of([&](const std::vector<Variable>& in) {
    return ScanStep({in[0]}, {{c, cast(c + 1.0, DType::Float32)}});
  });
  EXPECT_NE(text.find("updates shared variable 'c' (TensorType(float64, ())) with a value of "
                      "type TensorType(float32, ())"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace tscope
