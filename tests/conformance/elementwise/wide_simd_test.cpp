// SPDX-License-Identifier: Apache-2.0
// The 256- and 512-bit kernels of the unary simd ops (src/ops/elementwise/simd_wide.h), each
// width this CPU has: values against long-double references, and the same result for an element
// whatever its position in a call (tails run through the same vector code).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "simd_wide.h"
#include "support/test_util.h"

namespace tscope {
namespace {

using ops::detail::WideUnary;

struct Case {
  WideUnary fn;
  const char* name;
  long double (*reference)(long double);
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {WideUnary::Exp, "exp", [](long double x) { return std::exp(x); }},
      {WideUnary::Exp2, "exp2", [](long double x) { return std::exp2(x); }},
      {WideUnary::Expm1, "expm1", [](long double x) { return std::expm1(x); }},
      {WideUnary::Log, "log", [](long double x) { return std::log(x); }},
      {WideUnary::Log2, "log2", [](long double x) { return std::log2(x); }},
      {WideUnary::Log10, "log10", [](long double x) { return std::log10(x); }},
      {WideUnary::Log1p, "log1p", [](long double x) { return std::log1p(x); }},
      {WideUnary::Sin, "sin", [](long double x) { return std::sin(x); }},
      {WideUnary::Cos, "cos", [](long double x) { return std::cos(x); }},
      {WideUnary::Tanh, "tanh", [](long double x) { return std::tanh(x); }},
      {WideUnary::Erf, "erf", [](long double x) { return std::erf(x); }},
      {WideUnary::Sqrt, "sqrt", [](long double x) { return std::sqrt(x); }},
      {WideUnary::Sigmoid, "sigmoid", [](long double x) { return 1.0L / (1.0L + std::exp(-x)); }},
      {WideUnary::Softplus, "softplus",
       [](long double x) { return std::fmax(x, 0.0L) + std::log1p(std::exp(-std::fabs(x))); }}};
  static_assert(static_cast<int>(WideUnary::Count) == 14);
  return all;
}

// Values over [-30, 30], small ones near 0, and the special ones; an odd count, so every call
// has a tail.
template <class C>
std::vector<C> inputs() {
  std::vector<C> values;
  for (int i = 0; i < 997; ++i) values.push_back(static_cast<C>(-30.0 + 60.0 * i / 996.0));
  for (double x : {0.0, -0.0, 1e-30, -1e-30, 1e-5, -1e-5, 0.5, 1.0, 2.0, 88.0, -88.0, 700.0}) {
    values.push_back(static_cast<C>(x));
  }
  values.push_back(std::numeric_limits<C>::infinity());
  values.push_back(-std::numeric_limits<C>::infinity());
  values.push_back(std::numeric_limits<C>::quiet_NaN());
  return values;
}

// SLEEF's functions are within 1 ULP (u10), tanh within 3.5 (u35); the tolerance allows 4 ULPs
// of the result, and an absolute floor for results that pass through zero (sin, log near 1).
template <class C>
bool close(C got, long double expected) {
  const auto wanted = static_cast<C>(expected);
  if (std::isnan(wanted)) return std::isnan(got);
  if (std::isinf(wanted)) return got == wanted;
  const C ulp =
      std::nextafter(std::fabs(wanted), std::numeric_limits<C>::infinity()) - std::fabs(wanted);
  const C floor = std::numeric_limits<C>::epsilon() * 4;
  return std::fabs(got - wanted) <= 4 * ulp + floor;
}

template <class C>
void check_width(int bits) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(std::string(c.name) + " at " + std::to_string(bits) + " bits");
    const auto kernel = ops::detail::kernel_for<C>(ops::detail::wide_kernels_of_width(c.fn, bits));
    if (kernel == nullptr) GTEST_SKIP() << "this CPU has no " << bits << "-bit vectors";
    const std::vector<C> x = inputs<C>();
    std::vector<C> out(x.size());
    kernel(x.data(), out.data(), static_cast<std::int64_t>(x.size()));
    int wrong = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!close(out[i], c.reference(static_cast<long double>(x[i]))) && ++wrong <= 3) {
        ADD_FAILURE() << c.name << "(" << x[i] << ") = " << out[i] << ", expected "
                      << static_cast<double>(c.reference(static_cast<long double>(x[i])));
      }
    }
    // Each element alone (all tail) gives the bits it got among the others.
    for (std::size_t i = 0; i < x.size(); i += 7) {
      C alone = 0;
      kernel(&x[i], &alone, 1);
      if (std::isnan(out[i])) {
        EXPECT_TRUE(std::isnan(alone)) << x[i];
      } else {
        EXPECT_EQ(alone, out[i]) << x[i];
      }
    }
  }
}

TEST(WideSimd, Float32At256BitsMatchesTheReference) { check_width<float>(256); }
TEST(WideSimd, Float64At256BitsMatchesTheReference) { check_width<double>(256); }
TEST(WideSimd, Float32At512BitsMatchesTheReference) { check_width<float>(512); }
TEST(WideSimd, Float64At512BitsMatchesTheReference) { check_width<double>(512); }

// float32 erf is a fit of its own (erf_float.h), not SLEEF's: every 2^-12 over [-6, 6], where the
// fits meet at 0.875 and erf reaches 1, within 3 ULP of the correctly rounded value, at each width.
TEST(WideSimd, Float32ErfFitsWithinThreeUlpOnAFineGrid) {
  std::vector<float> x;
  for (int i = -6 * 4096; i <= 6 * 4096; ++i) x.push_back(static_cast<float>(i) / 4096.0f);
  for (int bits : {256, 512}) {
    SCOPED_TRACE(std::to_string(bits) + " bits");
    const auto kernel =
        ops::detail::kernel_for<float>(ops::detail::wide_kernels_of_width(WideUnary::Erf, bits));
    if (kernel == nullptr) continue;
    std::vector<float> out(x.size());
    kernel(x.data(), out.data(), static_cast<std::int64_t>(x.size()));
    int wrong = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const auto wanted = static_cast<float>(std::erf(static_cast<long double>(x[i])));
      const float ulp = std::nextafter(std::fabs(wanted), 2.0f) - std::fabs(wanted);
      if (std::fabs(out[i] - wanted) > 3 * ulp && ++wrong <= 3) {
        ADD_FAILURE() << "erf(" << x[i] << ") = " << out[i] << ", expected " << wanted;
      }
    }
    EXPECT_EQ(wrong, 0);
  }
}

// Through the graph: a node and a fused chain of these ops run the widest kernels and agree with
// the reference kernels, on a length that leaves a tail.
TEST(WideSimd, NodesAndCompositesAgreeWithTheReferenceKernels) {
  Variable x = vector(DType::Float32, "x");
  const std::vector<Variable> outputs{tanh(x), sigmoid(x) * tanh(x) + exp(x * 0.1)};
  FunctionOptions reference_options;
  reference_options.reference_kernels = true;
  Function fast = function({x}, outputs);
  Function reference = function({x}, outputs, {}, reference_options);
  const Tensor xs = testing::random_tensor(DType::Float32, {1001}, 5);
  const std::vector<Tensor> got = fast({xs});
  const std::vector<Tensor> expected = reference({xs});
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(testing::all_close(got[i], expected[i], 1e-6, 1e-6)) << i;
  }
}

// Slices of columns (dense rows apart from each other) run the vector kernels a row at a time;
// a transposed operand takes the scalar loop. Either way the reference kernels' answer.
TEST(WideSimd, SlicesOfColumnsAgreeWithTheReferenceKernels) {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(dtype));
    Variable x = tensor3(dtype, "x");
    const Variable a = subtensor(x, {slice(), slice(), slice(3, 20)});
    const Variable b = subtensor(x, {slice(), slice(), slice(4, 21)});
    const std::vector<Variable> outputs{sigmoid(a), tanh(a), exp(b), pow(abs(a), b),
                                        tanh(dimshuffle(x, {0, 2, 1}))};
    FunctionOptions reference_options;
    reference_options.reference_kernels = true;
    Function fast = function({x}, outputs);
    Function reference = function({x}, outputs, {}, reference_options);
    const Tensor xs = testing::random_tensor(dtype, {3, 5, 23}, 6);
    const std::vector<Tensor> got = fast({xs});
    const std::vector<Tensor> expected = reference({xs});
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(testing::all_close(got[i], expected[i], 1e-6, 1e-6)) << i;
    }
  }
}

}  // namespace
}  // namespace tscope
