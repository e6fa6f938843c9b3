// SPDX-License-Identifier: Apache-2.0
// Builders and operators for elementwise ops: thin, they only pick the op and make constants.
#include <cmath>

#include "tscope/graph/apply.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/registry.h"

namespace tscope {

Variable Operand::as_variable(DType like) const {
  if (!is_number_) return variable_;
  // A number takes the other operand's dtype unless that would lose its fraction.
  const bool integral_number = number_ == std::trunc(number_);
  const DType dtype = (is_floating(like) || integral_number) ? like : DType::Float64;
  return make_constant(Tensor::scalar(number_, dtype), "", location_);
}

Variable elementwise(std::string_view op_name,
                     std::initializer_list<Operand> operands,
                     const std::source_location& location) {
  DType like = DType::Float64;
  bool found = false;
  for (const Operand& operand : operands) {
    if (!operand.is_number()) {
      if (!operand.variable().defined()) {
        throw_error(ErrorKind::InvalidArgument, "{}: an operand is an undefined Variable", op_name);
      }
      like = operand.variable().dtype();
      found = true;
      break;
    }
  }
  if (!found) {
    throw_error(ErrorKind::InvalidArgument, "{}: at least one operand must be a Variable", op_name);
  }
  std::vector<Variable> inputs;
  for (const Operand& operand : operands) inputs.push_back(operand.as_variable(like));
  return apply_op1(op_def(op_name), std::move(inputs), {}, location);
}

Variable operator+(const Operand& a, const Operand& b) { return add(a, b, a.location()); }
Variable operator-(const Operand& a, const Operand& b) { return sub(a, b, a.location()); }
Variable operator*(const Operand& a, const Operand& b) { return mul(a, b, a.location()); }
Variable operator/(const Operand& a, const Operand& b) { return true_div(a, b, a.location()); }
Variable operator%(const Operand& a, const Operand& b) { return mod(a, b, a.location()); }
Variable operator-(const Operand& a) { return neg(a.as_variable(DType::Float64), a.location()); }
Variable operator<(const Operand& a, const Operand& b) { return lt(a, b, a.location()); }
Variable operator>(const Operand& a, const Operand& b) { return gt(a, b, a.location()); }
Variable operator<=(const Operand& a, const Operand& b) { return le(a, b, a.location()); }
Variable operator>=(const Operand& a, const Operand& b) { return ge(a, b, a.location()); }
Variable operator!(const Variable& x) { return logical_not(x); }

// Binary builders: one line each, the op name is all that differs.
#define TSCOPE_BINARY_BUILDER(builder, op_name)                                                \
  Variable builder(const Operand& a, const Operand& b, const std::source_location& location) { \
    return elementwise(op_name, {a, b}, location);                                             \
  }
TSCOPE_BINARY_BUILDER(add, "Add")
TSCOPE_BINARY_BUILDER(sub, "Sub")
TSCOPE_BINARY_BUILDER(mul, "Mul")
TSCOPE_BINARY_BUILDER(true_div, "TrueDiv")
TSCOPE_BINARY_BUILDER(int_div, "IntDiv")
TSCOPE_BINARY_BUILDER(mod, "Mod")
TSCOPE_BINARY_BUILDER(pow, "Pow")
TSCOPE_BINARY_BUILDER(maximum, "Maximum")
TSCOPE_BINARY_BUILDER(minimum, "Minimum")
TSCOPE_BINARY_BUILDER(eq, "EQ")
TSCOPE_BINARY_BUILDER(neq, "NEQ")
TSCOPE_BINARY_BUILDER(lt, "LT")
TSCOPE_BINARY_BUILDER(gt, "GT")
TSCOPE_BINARY_BUILDER(le, "LE")
TSCOPE_BINARY_BUILDER(ge, "GE")
TSCOPE_BINARY_BUILDER(logical_and, "And")
TSCOPE_BINARY_BUILDER(logical_or, "Or")
TSCOPE_BINARY_BUILDER(logical_xor, "Xor")
#undef TSCOPE_BINARY_BUILDER

#define TSCOPE_UNARY_BUILDER(builder, op_name)                                \
  Variable builder(const Variable& x, const std::source_location& location) { \
    return elementwise(op_name, {x}, location);                               \
  }
TSCOPE_UNARY_BUILDER(neg, "Neg")
TSCOPE_UNARY_BUILDER(abs, "Abs")
TSCOPE_UNARY_BUILDER(sgn, "Sgn")
TSCOPE_UNARY_BUILDER(sqr, "Sqr")
TSCOPE_UNARY_BUILDER(sqrt, "Sqrt")
TSCOPE_UNARY_BUILDER(reciprocal, "Reciprocal")
TSCOPE_UNARY_BUILDER(exp, "Exp")
TSCOPE_UNARY_BUILDER(exp2, "Exp2")
TSCOPE_UNARY_BUILDER(expm1, "Expm1")
TSCOPE_UNARY_BUILDER(log, "Log")
TSCOPE_UNARY_BUILDER(log2, "Log2")
TSCOPE_UNARY_BUILDER(log10, "Log10")
TSCOPE_UNARY_BUILDER(log1p, "Log1p")
TSCOPE_UNARY_BUILDER(tanh, "Tanh")
TSCOPE_UNARY_BUILDER(sigmoid, "Sigmoid")
TSCOPE_UNARY_BUILDER(softplus, "Softplus")
TSCOPE_UNARY_BUILDER(sin, "Sin")
TSCOPE_UNARY_BUILDER(cos, "Cos")
TSCOPE_UNARY_BUILDER(erf, "Erf")
TSCOPE_UNARY_BUILDER(floor, "Floor")
TSCOPE_UNARY_BUILDER(ceil, "Ceil")
TSCOPE_UNARY_BUILDER(round, "Round")
TSCOPE_UNARY_BUILDER(logical_not, "Not")
#undef TSCOPE_UNARY_BUILDER

Variable clip(const Operand& x,
              const Operand& low,
              const Operand& high,
              const std::source_location& location) {
  return elementwise("Clip", {x, low, high}, location);
}
Variable switch_(const Variable& condition,
                 const Operand& a,
                 const Operand& b,
                 const std::source_location& location) {
  // Numbers take the dtype of the first Variable branch, not of the bool condition.
  const Operand& like = a.is_number() ? b : a;
  const DType dtype = like.is_number() ? DType::Float64 : like.variable().dtype();
  return apply_op1(op_def("Switch"), {condition, a.as_variable(dtype), b.as_variable(dtype)}, {},
                   location);
}
Variable relu(const Variable& x, const std::source_location& location) {
  ProvenanceScope scope("relu", location);
  return maximum(x, 0.0, location);
}
Variable second(const Variable& like, const Variable& value, const std::source_location& location) {
  return elementwise("Second", {like, value}, location);
}
Variable cast(const Variable& x, DType dtype, const std::source_location& location) {
  return apply_op1(op_def("Cast"), {x}, Attrs{{"dtype", dtype}}, location);
}

}  // namespace tscope
