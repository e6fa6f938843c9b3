// SPDX-License-Identifier: Apache-2.0
#include "support/test_util.h"

namespace tscope {
namespace {

using testing::all_close;

TEST(Function, SeveralOutputsWithAndWithoutGc) {
  for (bool allow_gc : {true, false}) {
    Variable x = vector(DType::Float32, "x");
    Variable y = x * 2.0 + 1.0;
    Variable z = exp(y) - y;
    FunctionOptions options;
    options.allow_gc = allow_gc;
    Function f = function({x}, {y, z, sum(z)}, {}, options);
    for (int call = 0; call < 3; ++call) {
      const Tensor vx = Tensor::from_vector<float>({3}, {0.0f, 0.5f, static_cast<float>(call)});
      const auto out = f({vx});
      ASSERT_EQ(out.size(), 3u);
      for (std::int64_t i = 0; i < 3; ++i) {
        const double yv = vx.at(i) * 2.0 + 1.0;
        EXPECT_NEAR(out[0].at(i), yv, 1e-6);
        EXPECT_NEAR(out[1].at(i), std::exp(yv) - yv, 1e-4);
      }
    }
  }
}

TEST(Function, ResultsHeldByCallerSurviveTheNextCall) {
  Variable x = vector(DType::Float32, "x");
  FunctionOptions options;
  options.allow_gc = false;  // buffers are kept and reused between calls
  Function f = function({x}, {x * 3.0}, {}, options);
  const Tensor first = f({Tensor::from_vector<float>({2}, {1, 2})})[0];
  const Tensor second = f({Tensor::from_vector<float>({2}, {5, 6})})[0];
  EXPECT_EQ(first.to_doubles(), (std::vector<double>{3, 6}));
  EXPECT_EQ(second.to_doubles(), (std::vector<double>{15, 18}));
}

TEST(Function, KeptBuffersFollowShapeChangesBetweenCalls) {
  // allow_gc=false keeps each node's output for reuse; a call with other shapes must not reuse a
  // buffer of the wrong shape, and a scalar operand must not pass for a full-shape input.
  Variable x = vector(DType::Float32, "x");
  Variable s = scalar(DType::Float32, "s");
  FunctionOptions options;
  options.allow_gc = false;
  Function f = function({x, s}, {(x + s) * 2.0}, {}, options);
  for (std::int64_t length : {3, 5, 1, 3}) {
    std::vector<float> values;
    for (std::int64_t i = 0; i < length; ++i) values.push_back(static_cast<float>(i));
    const Tensor out = f({Tensor::from_vector<float>({length}, values), Tensor::scalar(1.0, DType::Float32)})[0];
    ASSERT_EQ(out.shape(), (Dims{length}));
    for (std::int64_t i = 0; i < length; ++i) EXPECT_EQ(out.at(i), 2.0 * (static_cast<double>(i) + 1.0));
  }
}

TEST(Function, WithGcNothingButTheResultsOutlivesTheCall) {
  // The random draw's advanced-state output is never read (no update given): the VM has no last
  // reader to free it after, so the call must release it at the end like every other value.
  RandomStream rng(7);
  Variable x = vector(DType::Float64, "x");
  Variable noise = rng.uniform(0.0, 1.0, {4});
  Variable y = exp(x + noise) * 2.0;
  FunctionOptions options;
  options.allow_gc = true;
  Function f = function({x}, {y}, {}, options);
  const Tensor vx = Tensor::from_vector<double>({4}, {0, 1, 2, 3});
  (void)f({vx});  // first call: one-off allocations, if any, happen here
  const std::int64_t live_before = default_allocator().stats().live_bytes;
  {
    const std::vector<Tensor> out = f({vx});
    EXPECT_EQ(default_allocator().stats().live_bytes - live_before, out[0].nbytes());
  }
  EXPECT_EQ(default_allocator().stats().live_bytes, live_before);
}

TEST(Function, WithGcAChainReusesFreedBuffersWithinTheCall) {
  // Each node's input is freed right after it runs; the next node of the same size takes that
  // buffer instead of allocating, so the chain needs a few buffers per call, not one per node.
  Variable x = vector(DType::Float32, "x");
  Variable y = x;
  for (int i = 0; i < 50; ++i) y = (i % 2 == 0) ? exp(y) * 0.5 : y + 1.0;
  FunctionOptions options;
  options.allow_gc = true;
  Function f = function({x}, {y}, {}, options);
  const Tensor vx = Tensor::full(DType::Float32, {100}, 0.25);
  const Tensor first = f({vx})[0];
  const std::int64_t before = default_allocator().stats().allocation_count;
  const Tensor second = f({vx})[0];
  const std::int64_t allocations = default_allocator().stats().allocation_count - before;
  EXPECT_LE(allocations, 4) << "a chain of 75 nodes allocated " << allocations << " buffers";
  EXPECT_EQ(first.to_doubles(), second.to_doubles());
}

TEST(Function, ConstantsKeepTheirValuesAcrossCalls) {
  // Constants are bound to their slots once, when the function is linked.
  Variable x = vector(DType::Float32, "x");
  for (bool allow_gc : {true, false}) {
    FunctionOptions options;
    options.allow_gc = allow_gc;
    Function f = function({x}, {(x + 1.5) * 2.0, x * 0.0 + 7.0}, {}, options);
    for (int call = 0; call < 3; ++call) {
      const auto out = f({Tensor::from_vector<float>({2}, {static_cast<float>(call), 1.0f})});
      EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{(call + 1.5) * 2.0, 5.0}));
      EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{7.0, 7.0}));
    }
  }
}

TEST(Function, UpdatesApplyAfterTheCall) {
  Variable counter = shared(Tensor::scalar(0.0, DType::Float64), "counter");
  Variable step = scalar(DType::Float64, "step");
  Function f = function({step}, {counter * 1.0}, {{counter, counter + step}});
  EXPECT_EQ(f({Tensor::scalar(2.0)})[0].at(0), 0.0);  // output sees the old value
  EXPECT_EQ(counter.get_value().at(0), 2.0);
  EXPECT_EQ(f({Tensor::scalar(3.0)})[0].at(0), 2.0);
  EXPECT_EQ(counter.get_value().at(0), 5.0);
}

TEST(Function, UpdateTypeMismatchIsRejected) {
  Variable w = shared(Tensor::zeros(DType::Float32, {3}), "w");
  Variable x = matrix(DType::Float32, "x");
  try {
    (void)function({x}, {}, {{w, x}});
    FAIL() << "expected TypeMismatch";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::TypeMismatch);
    EXPECT_NE(std::string(error.what()).find("'w'"), std::string::npos) << error.what();
  }
}

TEST(Function, InputValidationNamesTheInput) {
  Variable x = matrix(DType::Float32, "features", {kUnknownDim, 4});
  Function f = function({x}, {sum(x)});
  try {
    (void)f({Tensor::zeros(DType::Float64, {2, 4})});
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::TypeMismatch);
    EXPECT_NE(std::string(error.what()).find("features"), std::string::npos);
  }
  try {
    (void)f({Tensor::zeros(DType::Float32, {2, 5})});
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(error.what()).find("(2, 5)"), std::string::npos);
  }
  EXPECT_THROW((void)f({}), Error);
}

TEST(Function, MissingInputIsReportedAtCompileTime) {
  Variable x = vector(DType::Float32, "x");
  Variable y = vector(DType::Float32, "y");
  try {
    (void)function({x}, {x + y});
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(error.what()).find("'y'"), std::string::npos) << error.what();
  }
}

TEST(Function, DuplicateNodesAreMerged) {
  Variable x = vector(DType::Float32, "x");
  FunctionOptions options;
  options.excluded_rewrites = {"fuse_elementwise"};  // would fuse the merged exp and the add
  Function f = function({x}, {exp(x) + exp(x)}, {}, options);
  EXPECT_EQ(f.graph().node_count(), 2u);
  EXPECT_TRUE(all_close(f({Tensor::from_vector<float>({1}, {0.0f})})[0],
                        Tensor::from_vector<float>({1}, {2.0f})));
}

TEST(Function, OutputCanBeAnInputOrShared) {
  Variable x = vector(DType::Float32, "x");
  Variable s = shared(Tensor::from_vector<float>({1}, {7.0f}), "s");
  Function f = function({x}, {x, s});
  const auto out = f({Tensor::from_vector<float>({1}, {3.0f})});
  EXPECT_EQ(out[0].at(0), 3.0);
  EXPECT_EQ(out[1].at(0), 7.0);
}

TEST(Function, ProvenanceSurvivesCompilation) {
  Variable x = vector(DType::Float32, "x");
  Variable y = relu(x);  // line recorded here
  Function f = function({x}, {y});
  const auto nodes = f.graph().toposort();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0]->provenance().user_op, "relu");
  EXPECT_NE(nodes[0]->provenance().site.short_string().find("function_test.cpp"), std::string::npos);
}

}  // namespace
}  // namespace tscope
