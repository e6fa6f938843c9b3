// SPDX-License-Identifier: Apache-2.0
// Conformance of prod, max, min, any, all, argmax, argmin, var and stddev: fast kernels against
// reference kernels (non-consecutive and negative axes, keepdims, zero-size dims, non-contiguous
// inputs, integer and bool dtypes), values against hand-computed results, gradients against
// finite differences, and errors.
#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>

#include "support/test_util.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"

namespace tscope {
namespace {

using testing::fast_matches_reference;
using testing::gradient_matches_numeric;
using testing::random_tensor;
using testing::run_graph;

struct ReduceCase {
  std::string name;
  Dims shape;
  std::vector<std::int64_t> axes;
  bool keepdims;
};
void PrintTo(const ReduceCase& c, std::ostream* os) { *os << c.name; }

std::vector<Variable> all_reductions(const Variable& x, const ReduceCase& c) {
  return {sum(x, c.axes, c.keepdims),    mean(x, c.axes, c.keepdims), prod(x, c.axes, c.keepdims),
          max(x, c.axes, c.keepdims),    min(x, c.axes, c.keepdims),  any(x, c.axes, c.keepdims),
          all(x, c.axes, c.keepdims),    argmax(x, c.axes, c.keepdims),
          argmin(x, c.axes, c.keepdims)};
}

class ReduceOps : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(ReduceOps, FastMatchesReferenceForEveryDtype) {
  const ReduceCase& c = GetParam();
  for (DType dtype : {DType::Float32, DType::Float64, DType::Int32, DType::Int8, DType::Bool}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    Variable x = tensor(dtype, c.shape, "x");
    const Tensor value = random_tensor(dtype, c.shape, 11, -3.0, 3.0);
    EXPECT_TRUE(fast_matches_reference({x}, all_reductions(x, c), {value}, 1e-5, 1e-6));
    EXPECT_TRUE(fast_matches_reference({x}, all_reductions(x, c),
                                       {testing::non_contiguous_copy(value)}, 1e-5, 1e-6));
  }
}

TEST_P(ReduceOps, GradientsMatchFiniteDifferences) {
  const ReduceCase& c = GetParam();
  const Tensor point = random_tensor(DType::Float64, c.shape, 12, 0.5, 2.0);
  // Over one element (a rank-0 input; every other case reduces several) the variance is 0
  // everywhere, where the standard deviation, a square root, has no derivative: its gradient is
  // NaN, as in the reference, so it is not compared there.
  const auto stddev_or_var = c.shape.rank() > 0 ? stddev : var;
  for (auto build : {prod, max, min, var, stddev_or_var}) {
    EXPECT_TRUE(gradient_matches_numeric(
        [&](const auto& v) { return build(v[0], c.axes, c.keepdims, std::source_location::current()); },
        {point}));
  }
}

// MeanGrad, mean's gradient: the fast kernel (runs of one value where the trailing axes are
// reduced, scaled rows of g where they are kept) against the reference, with g contiguous and
// strided.
TEST_P(ReduceOps, MeanGradientFastMatchesReference) {
  const ReduceCase& c = GetParam();
  for (DType dtype : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    Variable x = tensor(dtype, c.shape, "x");
    const Variable reduced = mean(x, c.axes, c.keepdims);
    Variable g = tensor(dtype, reduced.type().dims, "g");
    const Variable gradient = apply_op1(op_def("MeanGrad"), {x, g}, reduced.owner()->attrs(),
                                        std::source_location::current());
    const Tensor x_value = random_tensor(dtype, c.shape, 13);
    const Tensor g_value = random_tensor(dtype, reduced.type().dims, 14);
    EXPECT_TRUE(fast_matches_reference({x, g}, {gradient}, {x_value, g_value}, 1e-6, 1e-7));
    EXPECT_TRUE(fast_matches_reference({x, g}, {gradient},
                                       {x_value, testing::non_contiguous_copy(g_value)}, 1e-6,
                                       1e-7));
  }
}

INSTANTIATE_TEST_SUITE_P(Axes, ReduceOps,
                         ::testing::Values(ReduceCase{"all_3x4", {3, 4}, {}, false},
                                           ReduceCase{"last_3x4", {3, 4}, {1}, false},
                                           ReduceCase{"first_keep_3x4", {3, 4}, {0}, true},
                                           ReduceCase{"middle_2x3x4", {2, 3, 4}, {1}, false},
                                           ReduceCase{"outer_two_keep_2x3x4", {2, 3, 4}, {0, 2}, true},
                                           ReduceCase{"non_consecutive_2x3x4x5", {2, 3, 4, 5}, {0, 2}, false},
                                           ReduceCase{"negative_2x3", {2, 3}, {-1}, false},
                                           ReduceCase{"scalar_rank0", {}, {}, false},
                                           // A global average pool (squeeze-excitation).
                                           ReduceCase{"pool_keep_2x3x4x5", {2, 3, 4, 5}, {2, 3},
                                                      true},
                                           ReduceCase{"leading_2x3x4", {2, 3, 4}, {0}, false}),
                         [](const auto& info) { return info.param.name; });

TEST(ReduceOps, NonConsecutiveAxesOfLargeStridedInput) {
  Variable x = tensor(DType::Float32, {6, 7, 8, 9}, "x");
  const Tensor value = testing::non_contiguous_copy(random_tensor(DType::Float32, {6, 7, 8, 9}, 3));
  const std::vector<std::int64_t> axes{1, 3};
  EXPECT_TRUE(fast_matches_reference(
      {x}, {sum(x, axes), mean(x, axes, true), max(x, axes), min(x, axes, true)}, {value}, 1e-5, 1e-5));
}

TEST(ReduceOps, ValuesMatchHandComputedResults) {
  Variable x = matrix(DType::Float64, "x");
  const Tensor value = Tensor::from_vector<double>({2, 3}, {1, -2, 3, 4, 0, -6});
  for (bool reference : {false, true}) {
    const auto out = run_graph({x},
                               {prod(x, {1}), max(x, {0}), min(x, {-1}), any(x, {1}), all(x, {1}),
                                argmax(x, {1}), argmin(x), var(x, {1}), stddev(x), prod(x)},
                               {value}, reference);
    EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{-6, 0}));
    EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{4, 0, 3}));
    EXPECT_EQ(out[2].to_doubles(), (std::vector<double>{-2, -6}));
    EXPECT_EQ(out[3].dtype(), DType::Bool);
    EXPECT_EQ(out[3].to_doubles(), (std::vector<double>{1, 1}));
    EXPECT_EQ(out[4].to_doubles(), (std::vector<double>{1, 0}));
    EXPECT_EQ(out[5].dtype(), DType::Int64);
    EXPECT_EQ(out[5].to_doubles(), (std::vector<double>{2, 0}));
    EXPECT_EQ(out[6].to_doubles(), (std::vector<double>{5}));
    // Row 0: mean 2/3, squared deviations sum to 1/9 + 64/9 + 49/9 = 114/9, over 3.
    EXPECT_NEAR(out[7].at(0), 114.0 / 27.0, 1e-12);
    // Row 1: mean -2/3: (196 + 4 + 256) / 9 / 3.
    EXPECT_NEAR(out[7].at(1), 456.0 / 27.0, 1e-12);
    // All six: mean 0, squares sum to 66, over 6.
    EXPECT_NEAR(out[8].at(0), std::sqrt(11.0), 1e-12);
    EXPECT_EQ(out[9].to_doubles(), (std::vector<double>{0}));
  }
}

TEST(ReduceOps, ArgmaxOverSeveralAxesIsTheFlatIndexInTheReducedBlock) {
  Variable x = tensor(DType::Float32, {2, 2, 3}, "x");
  // In block 0 (axes 0 and 2 with axis 1 = 0) the maximum 9 sits at (1, 0, 2): flat 1 * 3 + 2.
  const Tensor value = Tensor::from_vector<float>({2, 2, 3}, {1, 2, 3, 7, 0, 0, 4, 5, 9, 8, 8, 1});
  const auto out = run_graph({x}, {argmax(x, {0, 2}), argmin(x, {0, 2})}, {value});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{5, 3}));  // block 1: first 8 at (1, 0)
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{0, 1}));
}

TEST(ReduceOps, TiesAndNaN) {
  Variable x = vector(DType::Float64, "x");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor value = Tensor::from_vector<double>({4}, {1, 5, 5, 2});
  const auto out = run_graph({x}, {argmax(x), grad(max(x), {x})[0]}, {value});
  EXPECT_EQ(out[0].at(0), 1.0);  // first of the tied maxima
  // Every tied maximum receives the full gradient (Theano's convention).
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{0, 1, 1, 0}));
  const Tensor with_nan = Tensor::from_vector<double>({3}, {1, nan, 3});
  for (bool reference : {false, true}) {
    const auto nan_out = run_graph({x}, {max(x), min(x), argmax(x)}, {with_nan}, reference);
    EXPECT_TRUE(std::isnan(nan_out[0].at(0)));
    EXPECT_TRUE(std::isnan(nan_out[1].at(0)));
    EXPECT_EQ(nan_out[2].at(0), 1.0);
  }
}

TEST(ReduceOps, ProdGradientIsExactWithZeros) {
  Variable x = matrix(DType::Float64, "x");
  // Row 0 has no zero, row 1 one zero, row 2 two zeros.
  const Tensor value = Tensor::from_vector<double>({3, 3}, {2, 3, 4, 2, 0, 5, 0, 3, 0});
  const auto out = run_graph({x}, {grad(sum(prod(x, {1})), {x})[0]}, {value});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{12, 8, 6, 0, 10, 0, 0, 0, 0}));
  // At a single zero the finite differences agree too.
  EXPECT_TRUE(gradient_matches_numeric([](const auto& v) { return prod(v[0], {1}); },
                                       {Tensor::from_vector<double>({2, 3}, {2, 0, 5, 1.5, 3, -2})}));
}

TEST(ReduceOps, LongFloat32RowsKeepPrecision) {
  const std::int64_t count = 1 << 22;
  Variable x = vector(DType::Float32, "x");
  const Tensor value = Tensor::full(DType::Float32, {count}, 0.1);
  const auto out = run_graph({x}, {sum(x), mean(x)}, {value});
  const double expected = static_cast<double>(count) * static_cast<double>(0.1F);
  EXPECT_NEAR(out[0].at(0), expected, expected * 1e-7);
  EXPECT_NEAR(out[1].at(0), static_cast<double>(0.1F), 1e-8);
}

TEST(ReduceOps, IntegerReductions) {
  Variable x = vector(DType::Int64, "x");
  const Tensor value = Tensor::from_vector<std::int64_t>({3}, {(std::int64_t{1} << 40) + 1, -3, 2});
  const auto out = run_graph({x}, {max(x), min(x), prod(x)}, {value});
  EXPECT_EQ(out[0].data<std::int64_t>()[0], (std::int64_t{1} << 40) + 1);
  EXPECT_EQ(out[1].data<std::int64_t>()[0], -3);
  EXPECT_EQ(out[2].data<std::int64_t>()[0], -6 * ((std::int64_t{1} << 40) + 1));
  EXPECT_EQ(prod(vector(DType::Bool, "b")).dtype(), DType::Int64);
  EXPECT_EQ(max(vector(DType::UInt8, "u")).dtype(), DType::UInt8);
}

TEST(ReduceOps, ZeroSizeIdentities) {
  Variable x = matrix(DType::Float32, "x");
  const Tensor empty_rows = Tensor::zeros(DType::Float32, {0, 3});
  for (bool reference : {false, true}) {
    const auto out = run_graph({x}, {prod(x, {0}), any(x, {0}), all(x, {0}), max(x, {1})},
                               {empty_rows}, reference);
    EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{1, 1, 1}));
    EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{0, 0, 0}));
    EXPECT_EQ(out[2].to_doubles(), (std::vector<double>{1, 1, 1}));
    EXPECT_EQ(out[3].shape(), (Dims{0}));
  }
}

TEST(ReduceOps, MaxOfEmptyExtentIsAnErrorNamingTheNode) {
  Variable x = matrix(DType::Float32, "x");
  for (bool reference : {false, true}) {
    try {
      (void)run_graph({x}, {max(x, {0})}, {Tensor::zeros(DType::Float32, {0, 3})}, reference);
      FAIL() << "expected an error";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
      const std::string text = error.what();
      EXPECT_NE(text.find("(0, 3)"), std::string::npos) << text;
      EXPECT_NE(text.find("CAReduce{maximum}{0}"), std::string::npos) << text;
      EXPECT_NE(text.find("reduce_ops_test.cpp"), std::string::npos) << text;
    }
  }
  EXPECT_THROW((void)argmax(x, {-3}), Error);
}

TEST(ReduceOps, PrintedNamesAndZeroGradients) {
  Variable x = tensor(DType::Float32, {2, 3, 4}, "x");
  EXPECT_EQ(prod(x, {1}).owner()->op_string(), "CAReduce{mul}{1}");
  EXPECT_EQ(max(x, {-1}, true).owner()->op_string(), "CAReduce{maximum}{2}{keepdims}");
  EXPECT_EQ(min(x, {0, 2}).owner()->op_string(), "CAReduce{minimum}{0,2}");
  EXPECT_EQ(any(x).owner()->op_string(), "CAReduce{or}{0,1,2}");
  EXPECT_EQ(all(x, {0}).owner()->op_string(), "CAReduce{and}{0}");
  EXPECT_EQ(argmax(x, {1}).owner()->op_string(), "Argmax{1}");
  EXPECT_EQ(argmax(x, {1}).type(), (Type{DType::Int64, Dims{2, 4}}));
  EXPECT_EQ(var(x, {1}, true).type().dims, (Dims{2, 1, 4}));
  EXPECT_EQ(var(x, {1}).owner()->provenance().user_op, "var");
  // argmax has a zero gradient: grad of a cost that depends on x only through argmax is zero.
  Variable cost = sum(x) * 0.0 + sum(cast(argmax(x, {1}), DType::Float32));
  const auto out = run_graph({x}, {grad(cost, {x})[0]}, {random_tensor(DType::Float32, {2, 3, 4}, 1)});
  EXPECT_EQ(out[0].to_doubles(), std::vector<double>(24, 0.0));
}

}  // namespace
}  // namespace tscope
