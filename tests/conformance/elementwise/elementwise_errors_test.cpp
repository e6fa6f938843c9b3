// SPDX-License-Identifier: Apache-2.0
// Bad input to elementwise ops raises tscope::Error of a fitting kind whose message names the
// problem, the shapes or dtypes, and the node with its creation site (this file).
#include "support/test_util.h"

namespace tscope {
namespace {

/// Runs `build` and returns the Error it raised (failing the test when it raised nothing).
template <class Build>
Error expect_error(Build build) {
  return testing::error_of(build);
}

void expect_mentions(const Error& error, const std::vector<std::string>& parts) {
  const std::string text = error.what();
  for (const std::string& part : parts) {
    EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' missing from: " << text;
  }
}

TEST(ElementwiseErrors, BoolIntoArithmeticIsTypeMismatchNamingTheInput) {
  Variable flag = vector(DType::Bool, "flag");
  Variable x = vector(DType::Float32, "x");
  for (const auto& build : std::vector<std::function<Variable()>>{
           [&] { return flag + x; }, [&] { return exp(flag); }, [&] { return int_div(flag, flag); },
           [&] { return abs(flag); }, [&] { return sqrt(flag); }, [&] { return floor(flag); }}) {
    const Error error = expect_error(build);
    EXPECT_EQ(error.kind(), ErrorKind::TypeMismatch);
    expect_mentions(error, {"flag", "bool", "elementwise_errors_test.cpp"});
  }
}

TEST(ElementwiseErrors, FloatIntoLogicIsTypeMismatch) {
  Variable x = vector(DType::Float64, "x");
  const Error error = expect_error([&] { return logical_and(x, x); });
  EXPECT_EQ(error.kind(), ErrorKind::TypeMismatch);
  expect_mentions(error, {"And", "float64", "elementwise_errors_test.cpp"});
}

TEST(ElementwiseErrors, SwitchNeedsABoolCondition) {
  Variable c = vector(DType::Float32, "c");
  const Error error = expect_error([&] { return switch_(c, c, 0.0); });
  EXPECT_EQ(error.kind(), ErrorKind::TypeMismatch);
  expect_mentions(error, {"bool condition", "float32", "elementwise_errors_test.cpp"});
}

TEST(ElementwiseErrors, StaticShapeMismatchIsReportedAtBuildTime) {
  Variable a = tensor(DType::Float32, {3, 4}, "a");
  Variable b = tensor(DType::Float32, {5, 4}, "b");
  const Error error = expect_error([&] { return a + b; });
  EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
  expect_mentions(error, {"(3, 4)", "(5, 4)", "elementwise_errors_test.cpp"});
  Variable c = tensor(DType::Float32, {4}, "c");
  const Error ternary = expect_error([&] { return clip(a, c, b); });
  EXPECT_EQ(ternary.kind(), ErrorKind::ShapeMismatch);
}

TEST(ElementwiseErrors, RuntimeShapeMismatchNamesNodeAndShapes) {
  Variable a = matrix(DType::Float32, "a");
  Variable b = matrix(DType::Float32, "b");
  Variable out = a * b;
  for (bool reference : {false, true}) {
    FunctionOptions options;
    options.reference_kernels = reference;
    Function f = function({a, b}, {out}, {}, options);
    const Error error = expect_error([&] {
      return f({Tensor::zeros(DType::Float32, {2, 3}), Tensor::zeros(DType::Float32, {2, 4})});
    });
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    expect_mentions(error,
                    {"Elemwise{mul,no_inplace}(a, b)", "(2, 3)", "elementwise_errors_test.cpp"});
  }
}

TEST(ElementwiseErrors, UndefinedOperandIsInvalidArgument) {
  const Error error = expect_error([] { return exp(Variable()); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  expect_mentions(error, {"Exp", "undefined"});
}

}  // namespace
}  // namespace tscope
