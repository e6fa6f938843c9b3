// SPDX-License-Identifier: Apache-2.0
// RandomStream: reproducible across streams with one seed, fresh samples on each call through the
// state updates, moments on large samples, shapes, zero gradient, and bad arguments; dropout's
// mask statistics, scaling, identity cases, gradient through a fixed mask and bad arguments; draws
// whose sample shape is known only when the function runs.
#include <cmath>

#include "support/test_util.h"

namespace tscope {
namespace {

std::vector<Update> updates_of(const RandomStream& stream) {
  std::vector<Update> updates;
  for (const RandomStateUpdate& u : stream.state_updates()) updates.push_back({u.shared, u.new_value});
  return updates;
}

struct Moments {
  double mean = 0;
  double variance = 0;
};

Moments moments(const Tensor& samples) {
  const std::vector<double> values = samples.to_doubles();
  Moments m;
  for (double v : values) m.mean += v;
  m.mean /= static_cast<double>(values.size());
  for (double v : values) m.variance += (v - m.mean) * (v - m.mean);
  m.variance /= static_cast<double>(values.size() - 1);
  return m;
}

TEST(RandomStream, SameSeedGivesTheSameSequence) {
  std::vector<std::vector<double>> runs;
  for (int run = 0; run < 2; ++run) {
    RandomStream stream(1234);
    Variable u = stream.uniform(-1.0, 1.0, {3, 4});
    Variable n = stream.normal(0.0, 1.0, {5}, DType::Float32);
    Variable k = stream.integers(0, 10, {7});
    Function f = function({}, {u, n, k}, updates_of(stream));
    std::vector<double> all;
    for (int call = 0; call < 3; ++call) {
      for (const Tensor& t : f({})) {
        const std::vector<double> values = t.to_doubles();
        all.insert(all.end(), values.begin(), values.end());
      }
    }
    runs.push_back(all);
  }
  EXPECT_EQ(runs[0], runs[1]);
}

TEST(RandomStream, SuccessiveCallsGiveFreshSamplesOnlyWithTheUpdates) {
  RandomStream stream(7);
  Variable u = stream.uniform(0.0, 1.0, {8});
  Function with_updates = function({}, {u}, updates_of(stream));
  const std::vector<double> first = with_updates({})[0].to_doubles();
  const std::vector<double> second = with_updates({})[0].to_doubles();
  EXPECT_NE(first, second);
  Function without_updates = function({}, {u});
  EXPECT_EQ(without_updates({})[0].to_doubles(), without_updates({})[0].to_doubles());
  // Reseeding restores the first draw.
  stream.reseed(7);
  EXPECT_EQ(with_updates({})[0].to_doubles(), first);
}

TEST(RandomStream, DifferentSeedsAndDrawsDiffer) {
  RandomStream a(1);
  RandomStream b(2);
  Variable a0 = a.uniform(0.0, 1.0, {16});
  Variable a1 = a.uniform(0.0, 1.0, {16});
  Variable b0 = b.uniform(0.0, 1.0, {16});
  const auto out = testing::run_graph({}, {a0, a1, b0}, {});
  EXPECT_NE(out[0].to_doubles(), out[1].to_doubles());
  EXPECT_NE(out[0].to_doubles(), out[2].to_doubles());
}

TEST(RandomStream, MomentsOnLargeSamples) {
  RandomStream stream(99);
  const std::int64_t count = 200000;
  Variable u = stream.uniform(2.0, 5.0, {count});
  Variable n = stream.normal(-1.0, 3.0, {count}, DType::Float32);
  Variable k = stream.integers(-3, 7, {count}, DType::Int32);
  const auto out = testing::run_graph({}, {u, n, k}, {});
  const Moments mu = moments(out[0]);
  EXPECT_NEAR(mu.mean, 3.5, 0.02);
  EXPECT_NEAR(mu.variance, 9.0 / 12.0, 0.02);
  const Moments mn = moments(out[1]);
  EXPECT_NEAR(mn.mean, -1.0, 0.03);
  EXPECT_NEAR(mn.variance, 9.0, 0.15);
  const Moments mk = moments(out[2]);
  EXPECT_NEAR(mk.mean, 1.5, 0.03);
  EXPECT_NEAR(mk.variance, (100.0 - 1.0) / 12.0, 0.1);
  const std::vector<double> u_values = out[0].to_doubles();
  const std::vector<double> k_values = out[2].to_doubles();
  for (double v : u_values) ASSERT_TRUE(v >= 2.0 && v < 5.0) << v;
  std::vector<int> histogram(10, 0);
  for (double v : k_values) {
    ASSERT_TRUE(v >= -3 && v < 7) << v;
    ++histogram[static_cast<std::size_t>(v + 3)];
  }
  for (int bucket : histogram) EXPECT_NEAR(bucket, count / 10, count / 100);
}

TEST(RandomStream, ShapesAndDtypes) {
  RandomStream stream(5);
  Variable u = stream.uniform(0.0, 1.0, {2, 0, 3}, DType::Float32);
  Variable k = stream.integers(0, 255, {4, 5}, DType::UInt8);
  EXPECT_EQ(u.type(), (Type{DType::Float32, Dims{2, 0, 3}}));
  EXPECT_EQ(k.type(), (Type{DType::UInt8, Dims{4, 5}}));
  const auto out = testing::run_graph({}, {u, k}, {});
  EXPECT_EQ(out[0].shape(), (Dims{2, 0, 3}));
  EXPECT_EQ(out[1].shape(), (Dims{4, 5}));
}

TEST(RandomStream, SymbolicSampleShapesAreReadWhenTheFunctionRuns) {
  RandomStream stream(9);
  Variable x = matrix(DType::Float32, "x");
  Variable n = scalar(DType::Int64, "n");
  const Variable three = constant(Tensor::scalar(3, DType::Int64));
  Variable u = stream.uniform(0.0, 1.0, shape(x), DType::Float32);
  Variable g = stream.normal(0.0, 1.0, make_vector({n, three}));
  Variable k = stream.integers(0, 10, make_vector({n}), DType::Int32);
  EXPECT_EQ(u.type(), (Type{DType::Float32, Dims{kUnknownDim, kUnknownDim}}));
  EXPECT_EQ(g.type(), (Type{DType::Float64, Dims{kUnknownDim, 3}}));
  EXPECT_EQ(k.type(), (Type{DType::Int32, Dims{kUnknownDim}}));
  // The extents are inputs of the draw: Shape_i of x, n itself; 3 stays in the attrs.
  EXPECT_EQ(u.owner()->num_inputs(), 3);
  EXPECT_EQ(g.owner()->num_inputs(), 2);
  const Tensor x_value = Tensor::zeros(DType::Float32, {4, 5});
  const auto out =
      testing::run_graph({x, n}, {u, g, k}, {x_value, Tensor::scalar(2, DType::Int64)});
  EXPECT_EQ(out[0].shape(), (Dims{4, 5}));
  EXPECT_EQ(out[1].shape(), (Dims{2, 3}));
  EXPECT_EQ(out[2].shape(), (Dims{2}));
  // The same draws with static shapes give the same samples.
  RandomStream same(9);
  const auto expected =
      testing::run_graph({},
                         {same.uniform(0.0, 1.0, {4, 5}, DType::Float32),
                          same.normal(0.0, 1.0, {2, 3}), same.integers(0, 10, {2}, DType::Int32)},
                         {});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i].to_doubles(), expected[i].to_doubles()) << i;
  // Extents known at build time stay static.
  Variable fixed = tensor(DType::Float32, {2, 3}, "fixed");
  Variable v = stream.uniform(0.0, 1.0, shape(fixed));
  EXPECT_EQ(v.type().dims, (Dims{2, 3}));
  EXPECT_EQ(v.owner()->num_inputs(), 1);
}

TEST(RandomStream, BadSymbolicSampleShapesAreErrors) {
  RandomStream stream(4);
  Variable n = scalar(DType::Int64, "n");
  Variable samples = stream.normal(0.0, 1.0, make_vector({n}));
  const Error negative = testing::error_of(
      [&] { (void)testing::run_graph({n}, {samples}, {Tensor::scalar(-2, DType::Int64)}); });
  EXPECT_EQ(negative.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(testing::contains(negative, "RandomNormal")) << negative.what();
  EXPECT_TRUE(testing::contains(negative, "random_test.cpp")) << negative.what();
  const std::size_t draws = stream.state_updates().size();
  EXPECT_EQ(
      testing::error_of([&] { (void)stream.uniform(0.0, 1.0, matrix(DType::Int64, "m")); }).kind(),
      ErrorKind::TypeMismatch);
  EXPECT_EQ(testing::error_of([&] {
              (void)stream.uniform(0.0, 1.0, vector(DType::Float32, "f", {2}));
            }).kind(),
            ErrorKind::TypeMismatch);
  EXPECT_EQ(
      testing::error_of([&] { (void)stream.uniform(0.0, 1.0, vector(DType::Int64, "v")); }).kind(),
      ErrorKind::TypeMismatch);
  EXPECT_EQ(stream.state_updates().size(), draws);
}

TEST(RandomStream, SamplesHaveZeroGradientWithRespectToTheState) {
  RandomStream stream(3);
  Variable w = vector(DType::Float64, "w", {4});
  Variable noise = stream.normal(0.0, 1.0, {4});
  Variable cost = sum(w * noise);
  const std::vector<Variable> grads = grad(cost, {w});
  const Tensor value = testing::run_graph({w}, {grads[0], noise}, {Tensor::zeros(DType::Float64, {4})})[1];
  const Tensor gw = testing::run_graph({w}, {grads[0]}, {Tensor::zeros(DType::Float64, {4})})[0];
  EXPECT_TRUE(testing::all_close(gw, value));
  EXPECT_TRUE(op_def("RandomNormal").traits.zero_gradient);
  const std::vector<Variable> state_grad =
      grad(sum(noise), {stream.state_updates()[0].shared}, GradOptions{DisconnectedPolicy::Zero});
  ASSERT_EQ(state_grad.size(), 1u);
}

TEST(RandomStream, BadArgumentsAreErrors) {
  RandomStream stream(1);
  const auto kind_of = [](const auto& build) {
    try {
      build();
    } catch (const Error& error) {
      return error.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind_of([&] { (void)stream.uniform(1.0, 1.0, {3}); }), ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of([&] { (void)stream.normal(0.0, -1.0, {3}); }), ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of([&] { (void)stream.integers(5, 2, {3}); }), ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of([&] { (void)stream.integers(0, 300, {3}, DType::Int8); }),
            ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of([&] { (void)stream.uniform(0.0, 1.0, {3}, DType::Int32); }),
            ErrorKind::TypeMismatch);
  EXPECT_EQ(kind_of([&] { (void)stream.integers(0, 3, {3}, DType::Float32); }),
            ErrorKind::TypeMismatch);
  EXPECT_EQ(kind_of([&] { (void)stream.uniform(0.0, 1.0, {-2}); }), ErrorKind::InvalidArgument);
  // Failed draws leave no dangling state update behind.
  EXPECT_TRUE(stream.state_updates().empty());
}

TEST(Dropout, MaskKeepsOneMinusPAndScalesTheSurvivors) {
  RandomStream stream(2024);
  Variable x = tensor(DType::Float64, {100, 100}, "x");
  Function f = function({x}, {stream.dropout(x, 0.3)});
  const std::vector<double> y = f({Tensor::full(DType::Float64, {100, 100}, 1.0)})[0].to_doubles();
  std::size_t kept = 0;
  for (double v : y) {
    if (v == 0.0) continue;
    ++kept;
    EXPECT_DOUBLE_EQ(v, 1.0 / 0.7);
  }
  // 10000 Bernoulli(0.7) draws: standard deviation of the fraction 0.0046; 0.02 is over 4 of them.
  EXPECT_NEAR(static_cast<double>(kept) / 10000.0, 0.7, 0.02);
}

TEST(Dropout, SameSeedSameMaskAndFreshMaskWithStateUpdates) {
  std::vector<std::vector<double>> masks;
  for (int run = 0; run < 2; ++run) {
    RandomStream stream(7);
    Variable x = tensor(DType::Float32, {64}, "x");
    Variable y = stream.dropout(x, 0.5);  // before updates_of(), which must see its state
    Function f = function({x}, {y}, updates_of(stream));
    const Tensor ones = Tensor::full(DType::Float32, {64}, 1.0);
    masks.push_back(f({ones})[0].to_doubles());
    masks.push_back(f({ones})[0].to_doubles());
  }
  EXPECT_EQ(masks[0], masks[2]);
  EXPECT_EQ(masks[1], masks[3]);
  EXPECT_NE(masks[0], masks[1]);
}

TEST(Dropout, InferenceAndZeroPAreTheIdentity) {
  RandomStream stream(3);
  Variable x = matrix(DType::Float32, "x");
  EXPECT_EQ(stream.dropout(x, 0.5, /*training=*/false).node(), x.node());
  Variable fixed = tensor(DType::Float32, {2, 3}, "fixed");
  EXPECT_EQ(stream.dropout(fixed, 0.0).node(), fixed.node());
  EXPECT_TRUE(stream.state_updates().empty());
}

TEST(Dropout, GradientIsTheFixedMaskScaled) {
  // No state updates: every evaluation sees the same mask, so the function is differentiable.
  const auto build = [](const std::vector<Variable>& inputs) {
    RandomStream stream(11);
    return sum(sqr(stream.dropout(inputs[0], 0.4)));
  };
  const Tensor point = Tensor::from_doubles(DType::Float64, {3, 4},
                                            {0.5, -1.2, 0.3, 2.0, -0.7, 1.1, 0.9, -0.4, 1.5, 0.2,
                                             -1.8, 0.6});
  EXPECT_TRUE(testing::gradient_matches_numeric(build, {point}));
}

TEST(Dropout, UnknownExtentsDrawAMaskOfTheRunTimeShape) {
  RandomStream stream(13);
  Variable x = matrix(DType::Float32, "x");
  Variable y = stream.dropout(x, 0.5);
  const Tensor ones = Tensor::full(DType::Float32, {30, 40}, 1.0);
  const std::vector<double> values = testing::run_graph({x}, {y}, {ones})[0].to_doubles();
  ASSERT_EQ(values.size(), 1200U);
  std::size_t kept = 0;
  for (double v : values) {
    if (v != 0.0) ++kept;
  }
  // 1200 Bernoulli(0.5) draws: standard deviation of the fraction 0.0144.
  EXPECT_NEAR(static_cast<double>(kept) / 1200.0, 0.5, 0.07);
}

TEST(Dropout, BadArgumentsAreErrors) {
  RandomStream stream(1);
  Variable x = tensor(DType::Float32, {4}, "x");
  const auto kind_of = [](const auto& build) {
    try {
      build();
    } catch (const Error& error) {
      return error.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind_of([&] { (void)stream.dropout(x, 1.0); }), ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of([&] { (void)stream.dropout(x, -0.1); }), ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of([&] { (void)stream.dropout(x, std::nan("")); }), ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of([&] { (void)stream.dropout(tensor(DType::Int32, {4}, "i"), 0.5); }),
            ErrorKind::TypeMismatch);
  EXPECT_TRUE(stream.state_updates().empty());
}

}  // namespace
}  // namespace tscope
