// SPDX-License-Identifier: Apache-2.0
#include "elementwise_cases.h"

#include <algorithm>

namespace tscope::testing {
namespace {
constexpr DType kF32 = DType::Float32;
constexpr DType kF64 = DType::Float64;
constexpr DType kI8 = DType::Int8;
constexpr DType kU8 = DType::UInt8;
constexpr DType kI32 = DType::Int32;
constexpr DType kI64 = DType::Int64;
constexpr DType kBool = DType::Bool;

const std::vector<DType> kNumeric = {kF32, kF64, kI32, kI8, kU8, kI64};
const std::vector<DType> kAny = {kF32, kF64, kI32, kI8, kU8, kBool};
// Float ops accept integers too (promoted to float); int32 stands for them.
const std::vector<DType> kFloat = {kF32, kF64, kI32};
const std::vector<DType> kLogic = {kBool, kI32, kU8};

ElementwiseCase unary(std::string op,
                      std::vector<DType> dtypes,
                      Domain domain = {},
                      Domain grad_domain = {}) {
  return {std::move(op), 1, std::move(dtypes), {domain}, {grad_domain}};
}
ElementwiseCase binary(std::string op,
                       std::vector<DType> dtypes,
                       std::vector<Domain> domains = {{}},
                       std::vector<Domain> grad_domains = {{}}) {
  return {std::move(op), 2, std::move(dtypes), std::move(domains), std::move(grad_domains)};
}

std::vector<ElementwiseCase> make_cases() {
  const Domain positive{0.5, 3.0};
  const Domain wide{-3.0, 3.0};
  // Integer division and remainder: divisors include 0 and negatives on purpose.
  const std::vector<Domain> division = {{-9.0, 9.0}, {-4.0, 4.0}};
  std::vector<ElementwiseCase> cases = {
      binary("Add", kNumeric, {wide}),
      binary("Sub", kNumeric, {wide}),
      binary("Mul", kNumeric, {wide}),
      binary("TrueDiv", kFloat, {wide, positive}, {{-1.0, 1.0}, positive}),
      binary("IntDiv", kNumeric, division),
      // floor(a / b) stays 2 over the gradient domain, away from the jumps of mod.
      binary("Mod", kNumeric, division, {{2.2, 2.8}, {1.0, 1.05}}),
      binary("Pow", kFloat, {positive, {-2.0, 2.0}}, {positive, {-1.5, 1.5}}),
      binary("Maximum", kNumeric, {wide}),
      binary("Minimum", kNumeric, {wide}),
      {"Clip",
       3,
       kNumeric,
       {{-3.0, 3.0}, {-2.0, -0.5}, {0.5, 2.0}},
       {{-2.0, 2.0}, {-1.0, -0.5}, {0.5, 1.0}}},
      binary("Second", kAny, {wide}),
      binary("EQ", kAny, {{-2.0, 2.0}}),
      binary("NEQ", kAny, {{-2.0, 2.0}}),
      binary("LT", kAny, {{-2.0, 2.0}}),
      binary("GT", kAny, {{-2.0, 2.0}}),
      binary("LE", kAny, {{-2.0, 2.0}}),
      binary("GE", kAny, {{-2.0, 2.0}}),
      binary("And", kLogic, {{-1.0, 2.0}}),
      binary("Or", kLogic, {{-1.0, 2.0}}),
      binary("Xor", kLogic, {{-1.0, 2.0}}),
      unary("Not", kLogic, {-1.0, 2.0}),
      {"Switch", 3, kAny, {wide}, {{-1.0, 1.0}}, /*bool_condition=*/true},
      unary("Neg", kNumeric, wide),
      unary("Abs", kNumeric, wide),
      unary("Sgn", kNumeric, wide),
      unary("Sqr", kNumeric, wide),
      unary("Sqrt", kFloat, positive, positive),
      unary("Reciprocal", kFloat, positive, positive),
      unary("Exp", kFloat, wide),
      unary("Exp2", kFloat, wide),
      unary("Expm1", kFloat, wide),
      unary("Log", kFloat, positive, positive),
      unary("Log2", kFloat, positive, positive),
      unary("Log10", kFloat, positive, positive),
      unary("Log1p", kFloat, {-0.5, 3.0}, {-0.5, 2.0}),
      unary("Tanh", kFloat, wide),
      unary("Sigmoid", kFloat, {-20.0, 20.0}, wide),
      unary("Softplus", kFloat, {-20.0, 20.0}, wide),
      unary("Sin", kFloat, {-6.0, 6.0}, wide),
      unary("Cos", kFloat, {-6.0, 6.0}, wide),
      unary("Erf", kFloat, wide),
      unary("Floor", kNumeric, wide),
      unary("Ceil", kNumeric, wide),
      unary("Round", kNumeric, wide),
      unary("Cast", {kF32, kF64, kI32, kU8, kBool}, wide, wide),
  };
  return cases;
}
}  // namespace

const std::vector<ElementwiseCase>& elementwise_cases() {
  static const std::vector<ElementwiseCase> cases = make_cases();
  return cases;
}

const ElementwiseCase* find_elementwise_case(const std::string& op) {
  for (const ElementwiseCase& c : elementwise_cases()) {
    if (c.op == op) return &c;
  }
  return nullptr;
}

Variable build_elementwise(const ElementwiseCase& c, const std::vector<Variable>& inputs) {
  if (c.op == "Cast") {
    return cast(inputs[0], is_floating(inputs[0].dtype()) ? DType::Int32 : DType::Float64);
  }
  switch (inputs.size()) {
    case 1:
      return elementwise(c.op, {inputs[0]});
    case 2:
      return elementwise(c.op, {inputs[0], inputs[1]});
    default:
      return elementwise(c.op, {inputs[0], inputs[1], inputs[2]});
  }
}

Domain domain_for(const std::vector<Domain>& domains, int index, DType dtype) {
  Domain domain = domains[std::min<std::size_t>(index, domains.size() - 1)];
  if (dtype == DType::UInt8) {
    // Unsigned inputs: shift the range to start at 0 so both kernels see in-range values.
    const double width = domain.high - domain.low;
    domain.low = std::max(domain.low, 0.0);
    domain.high = std::max(domain.high, domain.low + width);
  }
  return domain;
}

DType input_dtype(const ElementwiseCase& c, int index, DType dtype) {
  return (c.bool_condition && index == 0) ? DType::Bool : dtype;
}

}  // namespace tscope::testing
