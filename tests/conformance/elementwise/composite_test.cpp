// SPDX-License-Identifier: Apache-2.0
// Composite (the fused elementwise op): on a table of expressions, shapes and both float dtypes,
// the fast kernel matches the reference kernel and both match the same expression built from the
// unfused ops; plus bad attributes and inputs, printing, cost and the parallel path.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <functional>
#include <limits>
#include <source_location>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "tscope/threads/parallel_for.h"

namespace tscope {
namespace {

using Build = std::function<Variable(const std::vector<Variable>&)>;

struct CompositeCase {
  std::string name;
  std::string expression;
  std::vector<Dims> shapes;
  Build unfused;
  std::string reduction;  // "", "add" or "maximum"
  std::vector<std::int64_t> axes;
  bool keepdims = false;
  bool transposed_input = false;  // input 0 is read through a transpose (a strided view)
  double low = -2.0;
  double high = 2.0;
};

std::vector<CompositeCase> composite_cases() {
  auto density = [](const auto& v) { return exp(-v[0] / v[1]) * v[2]; };
  auto sub_sqr = [](const auto& v) { return sqr(v[0] - v[1]); };
  return {
      {"DensityMiddleBroadcast", "Mul(Exp(TrueDiv(Neg(i0),i1)),i2)", {{2, 5, 3}, {2, 1, 3}, {2, 1, 3}},
       density},
      {"LeadingBroadcast", "Sqr(Sub(i0,i1))", {{4, 7}, {7}}, sub_sqr},
      // A comparison's 1 or 0 in the float dtype, kept by the Cast: a ReLU gradient's mask.
      {"ComparisonMask", "Mul(i0,Cast(GE(i1,i2)))", {{3, 9}, {3, 9}, {}},
       [](const auto& v) { return v[0] * cast(ge(v[1], v[2]), v[0].dtype()); }},
      {"TrailingBroadcast", "Add(Mul(i0,i1),i2)", {{3, 4, 5}, {3, 4, 1}, {1}},
       [](const auto& v) { return v[0] * v[1] + v[2]; }},
      {"RankZero", "Add(Exp(i0),i1)", {{}, {}}, [](const auto& v) { return exp(v[0]) + v[1]; }},
      {"RankZeroAgainstMatrix", "Maximum(Mul(i0,i1),i0)", {{}, {6, 5}},
       [](const auto& v) { return maximum(v[0] * v[1], v[0]); }},
      {"Empty", "Mul(Tanh(i0),i1)", {{0, 3}, {3}}, [](const auto& v) { return tanh(v[0]) * v[1]; }},
      {"SharedValue", "Exp(i0);Mul(t0,Add(t0,i1))", {{5, 6}, {6}},
       [](const auto& v) {
         const Variable e = exp(v[0]);
         return e * (e + v[1]);
       }},
      {"ManyOps", "Minimum(Softplus(Sigmoid(Sub(Abs(i0),Sqrt(Abs(i1))))),Log(Abs(i0)))",
       {{3, 1, 8}, {1, 9, 8}},
       [](const auto& v) { return minimum(softplus(sigmoid(abs(v[0]) - sqrt(abs(v[1])))),
                                          log(abs(v[0]))); }},
      {"TransposedInput", "Sub(Mul(i0,i1),i1)", {{9, 7}, {7, 9}},
       [](const auto& v) { return transpose(v[0]) * v[1] - v[1]; }, "", {}, false, true},
      {"LongContiguous", "Tanh(Add(Mul(i0,i1),i2))", {{70001}, {70001}, {}},
       [](const auto& v) { return tanh(v[0] * v[1] + v[2]); }},
      {"LongMiddleBroadcast", "Sqrt(Abs(Sub(i0,i1)))", {{64, 33, 20}, {64, 1, 20}},
       [](const auto& v) { return sqrt(abs(v[0] - v[1])); }},
      // A squeeze-and-excitation gate on channel-blocked data: one value per sample and channel
      // over every pixel, gathered as one run of a block's channels per pixel; the last tile is
      // shorter than the others.
      {"ChannelBlockGate", "Mul(Sigmoid(i0),i1)", {{3, 5, 1, 1, 16}, {3, 5, 7, 9, 16}},
       [](const auto& v) { return sigmoid(v[0]) * v[1]; }},
      {"LongTransposed", "Pow(Abs(i0),i1)", {{257, 150}, {150, 257}},
       [](const auto& v) { return pow(abs(transpose(v[0])), v[1]); }, "", {}, false, true},
      // Reductions: the main job's distance sum, then each tiling case.
      {"SumInnermost", "Sqr(Sub(i0,i1))", {{2, 1, 4, 3}, {1, 50, 1, 3}},
       [](const auto& v) { return sum(sqr(v[0] - v[1]), {3}); }, "add", {3}},
      {"SumInnermostLong", "Sqr(Sub(i0,i1))", {{8, 1, 12, 3}, {1, 512, 1, 3}},
       [](const auto& v) { return sum(sqr(v[0] - v[1]), {3}); }, "add", {3}},
      {"SumLongRuns", "Mul(Exp(i0),i1)", {{3, 2000}, {2000}},
       [](const auto& v) { return sum(exp(v[0]) * v[1], {1}); }, "add", {1}},
      {"SumLongRunsManyGroups", "Mul(i0,i1)", {{40, 1500}, {40, 1}},
       [](const auto& v) { return sum(v[0] * v[1], {1}); }, "add", {1}},
      {"SumOuterAxisKeepdims", "Add(i0,i1)", {{5, 4, 3}, {3}},
       [](const auto& v) { return sum(v[0] + v[1], {0}, true); }, "add", {0}, true},
      {"SumEverything", "Sqr(i0)", {{70000}}, [](const auto& v) { return sum(sqr(v[0])); }, "add",
       {}},
      {"SumOfEmpty", "Mul(i0,i1)", {{4, 0}, {0}},
       [](const auto& v) { return sum(v[0] * v[1], {1}); }, "add", {1}},
      {"MaxOverTwoAxes", "Sub(i0,i1)", {{6, 5, 7}, {5, 1}},
       [](const auto& v) { return max(v[0] - v[1], {0, 2}, true); }, "maximum", {0, 2}, true},
      {"MaxTransposed", "Sub(i1,i0)", {{33, 70}, {70, 33}},
       [](const auto& v) { return max(v[1] - transpose(v[0]), {1}); }, "maximum", {1}, false,
       true},
  };
}

struct Param {
  CompositeCase c;
  DType dtype;
};

CompositeCase find_case(const std::string& name) {
  for (const CompositeCase& c : composite_cases()) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no case " << name;
  return {};
}

std::vector<Param> params() {
  std::vector<Param> all;
  for (const CompositeCase& c : composite_cases()) {
    for (DType dtype : {DType::Float32, DType::Float64}) all.push_back({c, dtype});
  }
  return all;
}

std::vector<Variable> make_inputs(const Param& p) {
  std::vector<Variable> inputs;
  for (std::size_t i = 0; i < p.c.shapes.size(); ++i) {
    inputs.push_back(tensor(p.dtype, p.c.shapes[i], "x" + std::to_string(i)));
  }
  return inputs;
}

// Random values with a NaN, an infinity and a zero where there is room for them.
std::vector<Tensor> make_values(const Param& p) {
  std::vector<Tensor> values;
  for (std::size_t i = 0; i < p.c.shapes.size(); ++i) {
    Tensor value = testing::random_tensor(p.dtype, p.c.shapes[i], 17 + i, p.c.low, p.c.high);
    std::vector<double> data = value.to_doubles();
    if (data.size() >= 8) {
      data[1] = std::nan("");
      data[3 + i] = std::numeric_limits<double>::infinity();
      data[5] = 0.0;
    }
    values.push_back(Tensor::from_doubles(p.dtype, p.c.shapes[i], data));
  }
  return values;
}

Variable build_composite(const Param& p, std::vector<Variable> inputs) {
  if (p.c.transposed_input) inputs[0] = transpose(inputs[0]);
  if (p.c.reduction.empty()) return composite(inputs, p.c.expression);
  return composite_reduce(inputs, p.c.expression, p.c.reduction, p.c.axes, p.c.keepdims);
}

double rtol(DType dtype) { return dtype == DType::Float32 ? 2e-5 : 1e-11; }

class CompositeCases : public ::testing::TestWithParam<Param> {};

TEST_P(CompositeCases, FastMatchesReferenceAndTheUnfusedOps) {
  const Param& p = GetParam();
  const std::vector<Variable> inputs = make_inputs(p);
  const Variable fused = build_composite(p, inputs);
  const Variable unfused = p.c.unfused(inputs);
  ASSERT_EQ(fused.type(), unfused.type());
  const std::vector<Tensor> values = make_values(p);
  const Tensor fast = testing::run_graph(inputs, {fused}, values)[0];
  const Tensor reference = testing::run_graph(inputs, {fused}, values, true)[0];
  FunctionOptions options;
  options.excluded_rewrites = {"fuse_elementwise"};
  Function plain = function(inputs, {unfused}, {}, options);
  const Tensor expected = plain(values)[0];
  EXPECT_TRUE(testing::all_close(fast, reference, rtol(p.dtype), 1e-12));
  EXPECT_TRUE(testing::all_close(fast, expected, rtol(p.dtype), 1e-12));
  // Non-contiguous input values walk the gather path; the same values up to the order of a sum.
  std::vector<Tensor> strided;
  for (const Tensor& value : values) {
    strided.push_back(value.rank() == 0 ? value : testing::non_contiguous_copy(value));
  }
  EXPECT_TRUE(testing::all_close(testing::run_graph(inputs, {fused}, strided)[0], fast,
                                 rtol(p.dtype), 1e-12));
}

INSTANTIATE_TEST_SUITE_P(Composite, CompositeCases, ::testing::ValuesIn(params()),
                         [](const auto& info) {
                           return info.param.c.name +
                                  (info.param.dtype == DType::Float32 ? "_f32" : "_f64");
                         });

TEST(Composite, ParallelResultEqualsTheSerialOne) {
  for (const Param& each : {Param{find_case("LongTransposed"), DType::Float32},
                            Param{find_case("SumLongRuns"), DType::Float64},
                            Param{find_case("SumInnermostLong"), DType::Float32}}) {
    const std::vector<Variable> inputs = make_inputs(each);
    const Variable fused = build_composite(each, inputs);
    const std::vector<Tensor> values = make_values(each);
    Tensor serial;
    {
      const threads::ScopedThreadCount one(1);
      serial = testing::run_graph(inputs, {fused}, values)[0];
    }
    const threads::ScopedThreadCount three(3);
    EXPECT_TRUE(testing::all_close(testing::run_graph(inputs, {fused}, values)[0], serial, 0, 0))
        << each.c.name;
  }
}

TEST(Composite, PrintsTheExpressionTheanoStyle) {
  Variable x = matrix(DType::Float32, "x");
  Variable r = matrix(DType::Float32, "r");
  const Variable y = composite({x, r, r}, "Mul(Exp(TrueDiv(Neg(i0),i1)),i2)");
  EXPECT_EQ(y.owner()->op_string(), "Elemwise{Composite{(exp(((-i0) / i1)) * i2)}}");
  const Variable s = composite_reduce({x, r}, "Sqr(Sub(i0,i1))", "add", {1}, false);
  EXPECT_EQ(s.owner()->op_string(), "Elemwise{Composite{sqr((i0 - i1))},CAReduce{add}{1}}");
  EXPECT_EQ(s.owner()->op().family, "Elemwise");
}

TEST(Composite, CostCountsInnerFlopsAndOnlyInputAndOutputBytes) {
  const OpDef& op = op_def("Composite");
  const std::vector<Dims> inputs = {{3, 4}, {4}};
  const std::vector<Dims> outputs = {{3, 4}};
  const std::vector<DType> dtypes = {DType::Float32, DType::Float32};
  const Attrs attrs{{"expression", std::string("Sqr(Sub(i0,i1))")}};
  const Cost cost = op.cost(CostContext{op, inputs, outputs, dtypes, attrs});
  EXPECT_EQ(cost.flops, 24.0);
  EXPECT_EQ(cost.bytes, (12.0 + 4.0 + 12.0) * 4.0);
}

TEST(Composite, MalformedExpressionsAreErrorsNamingTheNode) {
  Variable x = matrix(DType::Float32, "x");
  Variable y = matrix(DType::Float32, "y");
  for (const std::string expression :
       {"Mul(i0,i1", "Mul(i0)", "Nope(i0)", "Mul(i0,i2)", "And(i0,i1)", "Exp(t0)", "i0", "",
        "Exp(i0);t0", "Exp(i0) junk"}) {
    const Error error = testing::error_of([&] { (void)composite({x, y}, expression); });
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument) << expression;
    EXPECT_TRUE(testing::contains(error, "Composite")) << expression << ": " << error.what();
    EXPECT_TRUE(testing::contains(error, "node Elemwise{Composite")) << error.what();
  }
  // Nesting deeper than the parser allows is an error too, not a stack overflow.
  std::string deep = "i0";
  for (int i = 0; i < 300; ++i) deep = "Neg(" + deep + ")";
  const Error too_deep = testing::error_of([&] { (void)composite({x}, deep); });
  EXPECT_EQ(too_deep.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(testing::contains(too_deep, "nested deeper than 256")) << too_deep.what();
  const Error bad_reduction = testing::error_of(
      [&] { (void)composite_reduce({x, y}, "Add(i0,i1)", "mul", {0}, false); });
  EXPECT_EQ(bad_reduction.kind(), ErrorKind::InvalidArgument);
}

TEST(Composite, MixedOrNonFloatDtypesAreTypeErrorsNamingTheNode) {
  Variable x = matrix(DType::Float32, "x");
  Variable d = matrix(DType::Float64, "d");
  Variable n = matrix(DType::Int64, "n");
  for (const Variable& other : {d, n}) {
    const Error error = testing::error_of([&] { (void)composite({x, other}, "Add(i0,i1)"); });
    EXPECT_EQ(error.kind(), ErrorKind::TypeMismatch);
    EXPECT_TRUE(testing::contains(error, "node Elemwise{Composite{(i0 + i1)}}")) << error.what();
  }
  const Error shapes = testing::error_of([&] {
    (void)composite({tensor(DType::Float32, {3, 4}), tensor(DType::Float32, {5, 4})}, "Add(i0,i1)");
  });
  EXPECT_EQ(shapes.kind(), ErrorKind::ShapeMismatch);
}

// A Composite with an "outputs" attribute: one node, one output per named statement.
std::vector<Variable> multi_output(const std::vector<Variable>& inputs, const std::string& expression,
                                   const std::vector<std::int64_t>& outputs,
                                   const std::string& reduction, const std::vector<std::int64_t>& axes) {
  Attrs attrs{{"expression", expression}, {"outputs", outputs}};
  if (!reduction.empty()) {
    attrs.set("reduce", reduction);
    attrs.set("axes", axes);
    attrs.set("keepdims", false);
  }
  return apply_op(op_def("Composite"), inputs, std::move(attrs), std::source_location::current());
}

Variable single_output(const std::vector<Variable>& inputs, const std::string& expression,
                       const std::string& reduction, const std::vector<std::int64_t>& axes) {
  if (reduction.empty()) return composite(inputs, expression);
  return composite_reduce(inputs, expression, reduction, axes, false);
}

// Each output of a multi-output node equals the single-output node of its own expression, on the
// fast and the reference kernel, for short runs (folded side by side), runs spread over tiles and
// long runs, with contiguous and strided inputs.
TEST(Composite, SeveralOutputsEqualTheirSingleOutputNodes) {
  struct Shape {
    Dims x;
    Dims scale;
    std::vector<std::int64_t> axes;
  };
  const std::vector<Shape> shapes = {{{4, 37, 12}, {4, 1, 12}, {2}},
                                     {{4, 37, 12}, {4, 1, 12}, {1}},
                                     {{4, 37, 12}, {4, 1, 12}, {}},
                                     {{3, 1000}, {3, 1}, {1}}};
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const Shape& shape : shapes) {
      for (const std::string reduction : {"", "add", "maximum"}) {
        Variable x = tensor(dtype, shape.x, "x");
        Variable scale = tensor(dtype, shape.scale, "scale");
        Variable weight = tensor(dtype, shape.scale, "weight");
        const std::vector<Variable> inputs{x, scale, weight};
        const std::vector<Variable> both = multi_output(
            inputs, "Exp(TrueDiv(Neg(i0),i1));Mul(t0,i2)", {1, 0}, reduction, shape.axes);
        ASSERT_EQ(both.size(), 2U);
        const Variable weighted =
            single_output(inputs, "Mul(Exp(TrueDiv(Neg(i0),i1)),i2)", reduction, shape.axes);
        const Variable plain = single_output(inputs, "Exp(TrueDiv(Neg(i0),i1))", reduction, shape.axes);
        EXPECT_EQ(both[0].type(), weighted.type());
        const std::vector<Tensor> values{testing::random_tensor(dtype, shape.x, 5, 0.0, 4.0),
                                         testing::random_tensor(dtype, shape.scale, 6, 0.5, 2.0),
                                         testing::random_tensor(dtype, shape.scale, 7, -1.0, 1.0)};
        std::vector<Tensor> strided;
        for (const Tensor& value : values) strided.push_back(testing::non_contiguous_copy(value));
        const std::vector<Tensor> expected = testing::run_graph(inputs, {weighted, plain}, values);
        const std::string label = fmt::format("{} {} axes {} {}", dtype_name(dtype),
                                              shape.x.to_string(), fmt::join(shape.axes, ","),
                                              reduction);
        for (const std::vector<Tensor>& actual :
             {testing::run_graph(inputs, both, values), testing::run_graph(inputs, both, values, true),
              testing::run_graph(inputs, both, strided)}) {
          ASSERT_EQ(actual.size(), 2U);
          for (std::size_t o = 0; o < 2; ++o) {
            EXPECT_TRUE(testing::all_close(actual[o], expected[o], rtol(dtype), 1e-12))
                << label << " output " << o;
          }
        }
      }
    }
  }
}

TEST(Composite, SeveralOutputsPrintAndCostTogether) {
  Variable x = matrix(DType::Float32, "x");
  Variable r = matrix(DType::Float32, "r");
  const std::vector<Variable> both =
      multi_output({x, r}, "Exp(TrueDiv(Neg(i0),i1));Mul(t0,i1)", {1, 0}, "add", {1});
  EXPECT_EQ(both[0].owner()->op_string(),
            "Elemwise{Composite{(exp(((-i0) / i1)) * i1), exp(((-i0) / i1))},CAReduce{add}{1}}");
  const OpDef& op = op_def("Composite");
  const std::vector<Dims> inputs = {{3, 4}, {3, 4}};
  const std::vector<Dims> outputs = {{3}, {3}};
  const std::vector<DType> dtypes = {DType::Float32, DType::Float32};
  const Cost cost = op.cost(CostContext{op, inputs, outputs, dtypes, both[0].owner()->attrs()});
  EXPECT_EQ(cost.bytes, (12.0 + 12.0 + 3.0 + 3.0) * 4.0);
}

TEST(Composite, OutputsNamingNoStatementOrOneTwiceAreErrors) {
  Variable x = matrix(DType::Float32, "x");
  for (const std::vector<std::int64_t>& outputs :
       std::vector<std::vector<std::int64_t>>{{2}, {-1}, {0, 0}}) {
    const Error error =
        testing::error_of([&] { (void)multi_output({x}, "Exp(i0);Neg(t0)", outputs, "", {}); });
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
    EXPECT_TRUE(testing::contains(error, "output t")) << error.what();
  }
}

TEST(Composite, MaximumOfAnEmptyExtentIsAnError) {
  Variable x = tensor(DType::Float64, {3, kUnknownDim}, "x");
  const Variable m = composite_reduce({x}, "Neg(i0)", "maximum", {1}, false);
  Function f = function({x}, {m});
  const Error error = testing::error_of([&] { (void)f({Tensor::zeros(DType::Float64, {3, 0})}); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
}

}  // namespace
}  // namespace tscope
