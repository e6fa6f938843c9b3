// SPDX-License-Identifier: Apache-2.0
// Elementwise values against closed forms (std:: functions and NumPy's documented results),
// dtype promotion, and the printed names.
#include <cmath>
#include <functional>
#include <limits>

#include "support/test_util.h"

namespace tscope {
namespace {

using testing::all_close;
using testing::run_graph;

using UnaryBuilder = Variable (*)(const Variable&, const std::source_location&);

struct UnaryClosedForm {
  std::string name;
  UnaryBuilder build;
  std::function<double(double)> expected;
  std::vector<double> points;
};

TEST(ElementwiseValues, UnaryOpsMatchStdFunctions) {
  const std::vector<double> general = {-2.5, -0.75, 0.0, 0.3, 1.5, 4.0};
  const std::vector<double> positive = {0.25, 0.5, 1.0, 2.0, 10.0};
  const std::vector<UnaryClosedForm> cases = {
      {"neg", neg, [](double v) { return -v; }, general},
      {"abs", abs, [](double v) { return std::fabs(v); }, general},
      {"sgn", sgn, [](double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }, general},
      {"sqr", sqr, [](double v) { return v * v; }, general},
      {"sqrt", sqrt, [](double v) { return std::sqrt(v); }, positive},
      {"reciprocal", reciprocal, [](double v) { return 1.0 / v; }, positive},
      {"exp", exp, [](double v) { return std::exp(v); }, general},
      {"exp2", exp2, [](double v) { return std::exp2(v); }, general},
      {"expm1", expm1, [](double v) { return std::expm1(v); }, general},
      {"log", log, [](double v) { return std::log(v); }, positive},
      {"log2", log2, [](double v) { return std::log2(v); }, positive},
      {"log10", log10, [](double v) { return std::log10(v); }, positive},
      {"log1p", log1p, [](double v) { return std::log1p(v); }, {-0.5, 0.0, 1e-10, 3.0}},
      {"tanh", tanh, [](double v) { return std::tanh(v); }, general},
      {"sigmoid", sigmoid, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }, general},
      {"softplus", softplus, [](double v) { return std::log1p(std::exp(v)); }, general},
      {"sin", sin, [](double v) { return std::sin(v); }, general},
      {"cos", cos, [](double v) { return std::cos(v); }, general},
      {"erf", erf, [](double v) { return std::erf(v); }, general},
      {"floor", floor, [](double v) { return std::floor(v); }, general},
      {"ceil", ceil, [](double v) { return std::ceil(v); }, general},
      {"relu", relu, [](double v) { return std::max(v, 0.0); }, general},
  };
  for (const UnaryClosedForm& c : cases) {
    for (DType dtype : {DType::Float64, DType::Float32}) {
      Variable x = vector(dtype, "x");
      const Tensor value =
          Tensor::from_doubles(dtype, {static_cast<std::int64_t>(c.points.size())}, c.points);
      const Variable y = c.build(x, std::source_location::current());
      for (bool reference : {false, true}) {
        const Tensor out = run_graph({x}, {y}, {value}, reference)[0];
        for (std::size_t i = 0; i < c.points.size(); ++i) {
          const double input = value.at(static_cast<std::int64_t>(i));
          const double expected = c.expected(input);
          const double tolerance = dtype == DType::Float64 ? 1e-14 : 1e-6;
          EXPECT_NEAR(out.at(static_cast<std::int64_t>(i)), expected,
                      tolerance * std::max(1.0, std::fabs(expected)))
              << c.name << "(" << input << ") " << dtype_name(dtype)
              << (reference ? " reference" : " fast");
        }
      }
    }
  }
}

TEST(ElementwiseValues, SigmoidAndSoftplusAreStableAtTheExtremes) {
  Variable x = vector(DType::Float64, "x");
  const Tensor value = Tensor::from_vector<double>({4}, {-800.0, -40.0, 40.0, 800.0});
  for (bool reference : {false, true}) {
    const auto out = run_graph({x}, {sigmoid(x), softplus(x)}, {value}, reference);
    EXPECT_EQ(out[0].at(0), 0.0);  // exp(-800) underflows: no nan from inf / inf
    EXPECT_NEAR(out[0].at(1), std::exp(-40.0), 1e-30);  // full relative precision in the tail
    EXPECT_EQ(out[0].at(2), 1.0);
    EXPECT_EQ(out[0].at(3), 1.0);
    EXPECT_EQ(out[1].at(0), 0.0);
    EXPECT_NEAR(out[1].at(1), std::exp(-40.0), 1e-30);
    EXPECT_DOUBLE_EQ(out[1].at(2), 40.0);
    EXPECT_DOUBLE_EQ(out[1].at(3), 800.0);  // no overflow to inf
  }
}

TEST(ElementwiseValues, RoundIsHalfToEven) {
  Variable x = vector(DType::Float64, "x");
  const std::vector<double> points = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4, 2.6, -2.6};
  const std::vector<double> expected = {-2.0, -2.0, -0.0, 0.0, 2.0, 2.0, 2.0, 3.0, -3.0};
  for (bool reference : {false, true}) {
    const Tensor out =
        run_graph({x}, {round(x)}, {Tensor::from_vector<double>({9}, points)}, reference)[0];
    EXPECT_EQ(out.to_doubles(), expected);
  }
}

TEST(ElementwiseValues, IntegerDivisionAndModFollowNumPy) {
  Variable a = vector(DType::Int32, "a");
  Variable b = vector(DType::Int32, "b");
  const std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
  const Tensor va = Tensor::from_vector<std::int32_t>({8}, {7, -7, 7, -7, 5, 6, kMin, kMin});
  const Tensor vb = Tensor::from_vector<std::int32_t>({8}, {2, 2, -2, -2, 0, 3, -1, 1});
  // NumPy: floor division, remainder with the divisor's sign; x // 0 == 0 and x % 0 == 0;
  // INT_MIN // -1 wraps to INT_MIN.
  const std::vector<double> quotient = {3, -4, -4, 3, 0, 2, kMin, kMin};
  const std::vector<double> remainder = {1, 1, -1, -1, 0, 0, 0, 0};
  for (bool reference : {false, true}) {
    const auto out = run_graph({a, b}, {int_div(a, b), a % b}, {va, vb}, reference);
    EXPECT_EQ(out[0].dtype(), DType::Int32);
    EXPECT_EQ(out[0].to_doubles(), quotient);
    EXPECT_EQ(out[1].to_doubles(), remainder);
  }
}

TEST(ElementwiseValues, FloatIntDivAndModFollowNumPy) {
  Variable a = vector(DType::Float64, "a");
  Variable b = vector(DType::Float64, "b");
  const Tensor va = Tensor::from_vector<double>({4}, {7.5, -7.5, 7.5, -7.5});
  const Tensor vb = Tensor::from_vector<double>({4}, {2.0, 2.0, -2.0, -2.0});
  const auto out = run_graph({a, b}, {int_div(a, b), mod(a, b)}, {va, vb});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{3.0, -4.0, -4.0, 3.0}));
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{1.5, 0.5, -0.5, -1.5}));
}

TEST(ElementwiseValues, IntegerOverflowWrapsAndAbsOfMinimumIsMinimum) {
  Variable a = vector(DType::Int32, "a");
  const std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
  const std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
  const Tensor va = Tensor::from_vector<std::int32_t>({2}, {kMax, kMin});
  const auto out = run_graph({a}, {a + 1, -a, abs(a), a * 2}, {va});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{kMin, kMin + 1.0}));
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{-kMax, kMin}));
  EXPECT_EQ(out[2].to_doubles(), (std::vector<double>{kMax, kMin}));
  EXPECT_EQ(out[3].to_doubles(), (std::vector<double>{-2, 0}));
}

TEST(ElementwiseValues, CastSaturatesOutOfRangeAndMapsNanToZero) {
  Variable x = vector(DType::Float64, "x");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor value = Tensor::from_vector<double>({5}, {1e20, -1e20, nan, 300.0, -2.7});
  for (bool reference : {false, true}) {
    const auto out =
        run_graph({x}, {cast(x, DType::Int32), cast(x, DType::UInt8)}, {value}, reference);
    EXPECT_EQ(out[0].to_doubles(),
              (std::vector<double>{std::numeric_limits<std::int32_t>::max(),
                                   std::numeric_limits<std::int32_t>::min(), 0, 300, -2}));
    EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{255, 0, 0, 255, 0}));
  }
}

TEST(ElementwiseValues, ComparisonsAndLogicReturnBool) {
  Variable a = vector(DType::Float32, "a");
  Variable b = vector(DType::Float32, "b");
  const Tensor va = Tensor::from_vector<float>({3}, {1.0f, 2.0f, 3.0f});
  const Tensor vb = Tensor::from_vector<float>({3}, {2.0f, 2.0f, 2.0f});
  const std::vector<Variable> outputs = {eq(a, b),
                                         neq(a, b),
                                         a<b, a> b,
                                         a <= b,
                                         a >= b,
                                         logical_and(a > 1.5, a < 2.5),
                                         logical_or(a<1.5, a> 2.5),
                                         logical_xor(a > 1.5, a > 2.5),
                                         logical_not(a > 1.5)};
  for (const Variable& out : outputs) EXPECT_EQ(out.dtype(), DType::Bool);
  const auto out = run_graph({a, b}, outputs, {va, vb});
  const std::vector<std::vector<double>> expected = {{0, 1, 0}, {1, 0, 1}, {1, 0, 0}, {0, 0, 1},
                                                     {1, 1, 0}, {0, 1, 1}, {0, 1, 0}, {1, 0, 1},
                                                     {0, 1, 0}, {1, 0, 0}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(out[i].to_doubles(), expected[i]) << outputs[i].to_string();
  }
}

TEST(ElementwiseValues, SwitchClipMinimumPow) {
  Variable x = vector(DType::Float64, "x");
  const Tensor value = Tensor::from_vector<double>({4}, {-2.0, -0.5, 0.5, 3.0});
  const auto out = run_graph(
      {x}, {switch_(x > 0.0, x, 10.0), clip(x, -1.0, 1.0), minimum(x, 0.0), pow(x, 2.0)}, {value});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{10.0, 10.0, 0.5, 3.0}));
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{-1.0, -0.5, 0.5, 1.0}));
  EXPECT_EQ(out[2].to_doubles(), (std::vector<double>{-2.0, -0.5, 0.0, 0.0}));
  EXPECT_TRUE(all_close(out[3], Tensor::from_vector<double>({4}, {4.0, 0.25, 0.25, 9.0})));
}

TEST(ElementwiseValues, MixedDtypesPromote) {
  Variable i = vector(DType::Int32, "i");
  Variable f = vector(DType::Float32, "f");
  Variable sum_if = i + f;
  EXPECT_EQ(sum_if.dtype(), DType::Float32);
  Variable ratio = i / i;
  EXPECT_EQ(ratio.dtype(), DType::Float64);
  EXPECT_EQ(exp(i).dtype(), DType::Float64);  // int32 needs float64 to be exact
  EXPECT_EQ(sqrt(vector(DType::Int8, "s")).dtype(), DType::Float32);
  EXPECT_EQ(int_div(i, i).dtype(), DType::Int32);
  EXPECT_EQ(abs(vector(DType::UInt8, "u")).dtype(), DType::UInt8);
  EXPECT_EQ((i < f).dtype(), DType::Bool);
  EXPECT_EQ(switch_(i > 0, i, f).dtype(), DType::Float32);
  const auto out = run_graph({i, f}, {sum_if, ratio},
                             {Tensor::from_vector<std::int32_t>({2}, {3, 4}),
                              Tensor::from_vector<float>({2}, {0.5f, 0.25f})});
  EXPECT_TRUE(all_close(out[0], Tensor::from_vector<float>({2}, {3.5f, 4.25f})));
  EXPECT_TRUE(all_close(out[1], Tensor::from_vector<double>({2}, {1.0, 1.0})));
}

TEST(ElementwiseValues, NumberOperandsTakeVariableDtype) {
  Variable x = vector(DType::Float32, "x");
  EXPECT_EQ((2 * x).dtype(), DType::Float32);
  EXPECT_EQ((x * 0.5).dtype(), DType::Float32);
  Variable n = vector(DType::Int64, "n");
  EXPECT_EQ((n + 1).dtype(), DType::Int64);
  EXPECT_EQ((n * 0.5).dtype(), DType::Float64);
  EXPECT_EQ((n % 3).dtype(), DType::Int64);
}

TEST(ElementwiseValues, PrintedNamesReadLikeTheano) {
  Variable x = vector(DType::Float32, "x");
  EXPECT_EQ((x + x).owner()->op_string(), "Elemwise{add,no_inplace}");
  EXPECT_EQ(cast(x, DType::Int32).owner()->op_string(), "Elemwise{cast{int32},no_inplace}");
  EXPECT_EQ(abs(x).owner()->op_string(), "Elemwise{abs_,no_inplace}");
  EXPECT_EQ(reciprocal(x).owner()->op_string(), "Elemwise{inv,no_inplace}");
  EXPECT_EQ(round(x).owner()->op_string(), "Elemwise{round_half_to_even,no_inplace}");
  EXPECT_EQ((x < 1.0).owner()->op_string(), "Elemwise{lt,no_inplace}");
  EXPECT_EQ(logical_and(x > 0.0, x < 1.0).owner()->op_string(), "Elemwise{and_,no_inplace}");
  EXPECT_EQ(switch_(x > 0.0, x, 0.0).owner()->op_string(), "Elemwise{switch,no_inplace}");
}

}  // namespace
}  // namespace tscope
