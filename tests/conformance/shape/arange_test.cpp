// SPDX-License-Identifier: Apache-2.0
// Conformance of ARange: values and lengths against numpy.arange's rule for integer and float
// bounds, constant bounds (static length) and symbolic ones (length known at run time) agreeing,
// the default dtype, the gradient (Theano's, for float outputs), and bad input at build time and
// at run time: a zero step, a length that overflows, non-scalar or bool inputs.
#include <cmath>
#include <limits>
#include <ostream>

#include "support/test_util.h"

namespace tscope {
namespace {

using testing::contains;
using testing::error_of;
using testing::run_graph;

struct ArangeCase {
  std::string name;
  DType input_dtype;
  double start;
  double stop;
  double step;
  DType dtype;
};
void PrintTo(const ArangeCase& c, std::ostream* os) { *os << c.name; }

// numpy.arange's values, computed in double.
std::vector<double> expected_values(const ArangeCase& c) {
  const double count = std::max(0.0, std::ceil((c.stop - c.start) / c.step));
  std::vector<double> values;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(count); ++i) {
    values.push_back(c.start + static_cast<double>(i) * c.step);
  }
  return values;
}

class ArangeValues : public ::testing::TestWithParam<ArangeCase> {};

TEST_P(ArangeValues, ConstantAndSymbolicBoundsMatchNumpy) {
  const ArangeCase& c = GetParam();
  const std::vector<double> expected = expected_values(c);
  const auto count = static_cast<std::int64_t>(expected.size());
  const Tensor start = Tensor::scalar(c.start, c.input_dtype);
  const Tensor stop = Tensor::scalar(c.stop, c.input_dtype);
  const Tensor step = Tensor::scalar(c.step, c.input_dtype);
  // Constant bounds: the length is static.
  Variable fixed = arange(constant(start), constant(stop), constant(step), c.dtype);
  EXPECT_EQ(fixed.type(), (Type{c.dtype, Dims{count}}));
  // Symbolic bounds: the same values, the length known when the function runs.
  Variable a = scalar(c.input_dtype, "start");
  Variable b = scalar(c.input_dtype, "stop");
  Variable d = scalar(c.input_dtype, "step");
  Variable symbolic = arange(a, b, d, c.dtype);
  EXPECT_EQ(symbolic.type(), (Type{c.dtype, Dims{kUnknownDim}}));
  const auto out = run_graph({a, b, d}, {fixed, symbolic}, {start, stop, step});
  const Tensor reference = Tensor::from_doubles(c.dtype, {count}, expected);
  for (const Tensor& value : out) {
    EXPECT_EQ(value.dtype(), c.dtype);
    EXPECT_TRUE(testing::all_close(value, reference, 1e-6, 1e-6));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Bounds,
    ArangeValues,
    ::testing::Values(ArangeCase{"int_up", DType::Int64, 0, 10, 1, DType::Int64},
                      ArangeCase{"int_down_by_3", DType::Int64, 10, 0, -3, DType::Int64},
                      ArangeCase{"int_uneven", DType::Int64, -7, 8, 4, DType::Int64},
                      ArangeCase{"int_empty_equal", DType::Int64, 3, 3, 1, DType::Int64},
                      ArangeCase{"int_empty_wrong_way", DType::Int64, 5, 0, 1, DType::Int64},
                      ArangeCase{"int32_to_float32", DType::Int32, 2, 9, 2, DType::Float32},
                      ArangeCase{"float_tenths", DType::Float64, 0, 1, 0.1, DType::Float64},
                      ArangeCase{"float_down", DType::Float64, 1.5, -2, -0.5, DType::Float64},
                      ArangeCase{"float32_out", DType::Float32, 0.25, 3, 0.75, DType::Float32},
                      ArangeCase{"float_to_int", DType::Float64, 0, 5.5, 1, DType::Int32}),
    [](const auto& info) { return info.param.name; });

TEST(ARange, IntegerBoundsAreExactPastDoublePrecision) {
  constexpr std::int64_t kBig = (std::int64_t{1} << 60) + 1;
  Variable start = scalar(DType::Int64, "start");
  Variable y = arange(start, constant(Tensor::from_vector<std::int64_t>({}, {kBig + 3})),
                      constant(Tensor::scalar(1, DType::Int64)));
  const Tensor value = run_graph({start}, {y}, {Tensor::from_vector<std::int64_t>({}, {kBig})})[0];
  ASSERT_EQ(value.shape(), (Dims{3}));
  const auto* data = static_cast<const std::int64_t*>(value.raw_data());
  EXPECT_EQ(data[0], kBig);
  EXPECT_EQ(data[2], kBig + 2);
}

TEST(ARange, DefaultDtypeAndPrintedName) {
  Variable i32 = scalar(DType::Int32, "i");
  Variable i64 = scalar(DType::Int64, "l");
  Variable f32 = scalar(DType::Float32, "f");
  Variable f64 = scalar(DType::Float64, "d");
  EXPECT_EQ(arange_dtype(i32, i32, i32), DType::Int64);
  EXPECT_EQ(arange_dtype(i32, i64, i32), DType::Int64);
  EXPECT_EQ(arange_dtype(f32, f32, f32), DType::Float32);
  EXPECT_EQ(arange_dtype(i32, f64, i32), DType::Float64);
  Variable y = arange(i32, i32, i32);
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.owner()->op_string(), "ARange{dtype='int64'}");
  // A stop behind Shape_i of a static axis gives a static length.
  Variable x = tensor(DType::Float32, {6, 2}, "x");
  EXPECT_EQ(arange(constant(Tensor::scalar(1, DType::Int64)), shape_i(x, 0),
                   constant(Tensor::scalar(2, DType::Int64)))
                .type()
                .dims,
            (Dims{3}));
}

TEST(ARange, FloatGradientIsTheanos) {
  const Tensor start = Tensor::scalar(0.3, DType::Float64);
  const Tensor step = Tensor::scalar(0.7, DType::Float64);
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) {
        return sqr(arange(v[0], constant(Tensor::scalar(5.0, DType::Float64)), v[1]));
      },
      {start, step}));
  // d sum(arange(s, 5, t)) / ds = n and / dt = n (n - 1) / 2: here n = ceil(4.7 / 0.7) = 7.
  Variable s = scalar(DType::Float64, "s");
  Variable t = scalar(DType::Float64, "t");
  const std::vector<Variable> grads =
      grad(sum(arange(s, constant(Tensor::scalar(5.0, DType::Float64)), t)), {s, t});
  const auto out = run_graph({s, t}, grads, {start, step});
  EXPECT_DOUBLE_EQ(out[0].at(0), 7.0);
  EXPECT_DOUBLE_EQ(out[1].at(0), 21.0);
}

TEST(ARange, IntegerOutputsPassNoGradient) {
  Variable n = scalar(DType::Int64, "n");
  Variable x = vector(DType::Float64, "x");
  Variable positions = cast(arange(constant(Tensor::scalar(0, DType::Int64)), n,
                                   constant(Tensor::scalar(1, DType::Int64))),
                            DType::Float64);
  const Variable gx = grad(sum(positions * x), {x})[0];
  const auto out = run_graph(
      {n, x}, {gx}, {Tensor::scalar(3, DType::Int64), Tensor::from_vector<double>({3}, {1, 1, 1})});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{0, 1, 2}));
  // Theano's rule: no gradient reaches integer bounds (they are disconnected).
  EXPECT_EQ(error_of([&] { (void)grad(sum(positions), {n}); }).kind(), ErrorKind::InvalidArgument);
}

TEST(ARange, BadBoundsAtBuildTimeNameTheCreationSite) {
  const auto int64 = [](std::int64_t value) {
    return constant(Tensor::from_vector<std::int64_t>({}, {value}));
  };
  const Error zero_step = error_of([&] { (void)arange(int64(0), int64(5), int64(0)); });
  EXPECT_EQ(zero_step.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(contains(zero_step, "step is 0")) << zero_step.what();
  EXPECT_TRUE(contains(zero_step, "arange_test.cpp")) << zero_step.what();
  // A zero step is refused even when the other bounds are symbolic.
  EXPECT_EQ(error_of([&] { (void)arange(scalar(DType::Int64, "a"), int64(5), int64(0)); }).kind(),
            ErrorKind::InvalidArgument);
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const Error overflow = error_of([&] { (void)arange(int64(kMin), int64(kMax), int64(1)); });
  EXPECT_EQ(overflow.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(contains(overflow, "overflows")) << overflow.what();
  // The length fits int64 but its bytes do not.
  EXPECT_EQ(error_of([&] { (void)arange(int64(0), int64(kMax), int64(1)); }).kind(),
            ErrorKind::InvalidArgument);
  const auto real = [](double value) { return constant(Tensor::scalar(value, DType::Float64)); };
  EXPECT_EQ(error_of([&] { (void)arange(real(0), real(1e300), real(1)); }).kind(),
            ErrorKind::InvalidArgument);
  EXPECT_EQ(error_of([&] { (void)arange(real(0), real(NAN), real(1)); }).kind(),
            ErrorKind::InvalidArgument);
  const Error not_scalar =
      error_of([&] { (void)arange(int64(0), vector(DType::Int64, "v"), int64(1)); });
  EXPECT_EQ(not_scalar.kind(), ErrorKind::TypeMismatch);
  EXPECT_TRUE(contains(not_scalar, "stop")) << not_scalar.what();
  EXPECT_EQ(error_of([&] { (void)arange(scalar(DType::Bool, "b"), int64(3), int64(1)); }).kind(),
            ErrorKind::TypeMismatch);
  EXPECT_EQ(error_of([&] { (void)arange(int64(0), int64(3), int64(1), DType::Bool); }).kind(),
            ErrorKind::TypeMismatch);
}

TEST(ARange, BadBoundsAtRunTimeNameTheNode) {
  Variable start = scalar(DType::Int64, "start");
  Variable stop = scalar(DType::Int64, "stop");
  Variable step = scalar(DType::Int64, "step");
  Variable y = arange(start, stop, step);
  Function f = function({start, stop, step}, {y});
  const auto call = [&](std::int64_t a, std::int64_t b, std::int64_t c) {
    return f({Tensor::from_vector<std::int64_t>({}, {a}),
              Tensor::from_vector<std::int64_t>({}, {b}),
              Tensor::from_vector<std::int64_t>({}, {c})});
  };
  const Error zero_step = error_of([&] { (void)call(0, 4, 0); });
  EXPECT_EQ(zero_step.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(contains(zero_step, "ARange")) << zero_step.what();
  EXPECT_TRUE(contains(zero_step, "arange_test.cpp")) << zero_step.what();
  const Error overflow = error_of([&] {
    (void)call(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
               1);
  });
  EXPECT_EQ(overflow.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(contains(overflow, "arange_test.cpp")) << overflow.what();
  // The function stays usable after the errors.
  EXPECT_EQ(call(1, 7, 2)[0].to_doubles(), (std::vector<double>{1, 3, 5}));
}

}  // namespace
}  // namespace tscope
