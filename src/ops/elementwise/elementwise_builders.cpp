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

Variable add(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("Add", {a, b}, location);
}
Variable sub(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("Sub", {a, b}, location);
}
Variable mul(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("Mul", {a, b}, location);
}
Variable true_div(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("TrueDiv", {a, b}, location);
}
Variable int_div(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("IntDiv", {a, b}, location);
}
Variable mod(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("Mod", {a, b}, location);
}
Variable pow(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("Pow", {a, b}, location);
}
Variable maximum(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("Maximum", {a, b}, location);
}
Variable minimum(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("Minimum", {a, b}, location);
}
Variable eq(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("EQ", {a, b}, location);
}
Variable neq(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("NEQ", {a, b}, location);
}
Variable lt(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("LT", {a, b}, location);
}
Variable gt(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("GT", {a, b}, location);
}
Variable le(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("LE", {a, b}, location);
}
Variable ge(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("GE", {a, b}, location);
}
Variable logical_and(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("And", {a, b}, location);
}
Variable logical_or(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("Or", {a, b}, location);
}
Variable logical_xor(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("Xor", {a, b}, location);
}
Variable neg(const Variable& x, const std::source_location& location) {
  return elementwise("Neg", {x}, location);
}
Variable abs(const Variable& x, const std::source_location& location) {
  return elementwise("Abs", {x}, location);
}
Variable sgn(const Variable& x, const std::source_location& location) {
  return elementwise("Sgn", {x}, location);
}
Variable sqr(const Variable& x, const std::source_location& location) {
  return elementwise("Sqr", {x}, location);
}
Variable sqrt(const Variable& x, const std::source_location& location) {
  return elementwise("Sqrt", {x}, location);
}
Variable reciprocal(const Variable& x, const std::source_location& location) {
  return elementwise("Reciprocal", {x}, location);
}
Variable exp(const Variable& x, const std::source_location& location) {
  return elementwise("Exp", {x}, location);
}
Variable exp2(const Variable& x, const std::source_location& location) {
  return elementwise("Exp2", {x}, location);
}
Variable expm1(const Variable& x, const std::source_location& location) {
  return elementwise("Expm1", {x}, location);
}
Variable log(const Variable& x, const std::source_location& location) {
  return elementwise("Log", {x}, location);
}
Variable log2(const Variable& x, const std::source_location& location) {
  return elementwise("Log2", {x}, location);
}
Variable log10(const Variable& x, const std::source_location& location) {
  return elementwise("Log10", {x}, location);
}
Variable log1p(const Variable& x, const std::source_location& location) {
  return elementwise("Log1p", {x}, location);
}
Variable tanh(const Variable& x, const std::source_location& location) {
  return elementwise("Tanh", {x}, location);
}
Variable sigmoid(const Variable& x, const std::source_location& location) {
  return elementwise("Sigmoid", {x}, location);
}
Variable softplus(const Variable& x, const std::source_location& location) {
  return elementwise("Softplus", {x}, location);
}
Variable sin(const Variable& x, const std::source_location& location) {
  return elementwise("Sin", {x}, location);
}
Variable cos(const Variable& x, const std::source_location& location) {
  return elementwise("Cos", {x}, location);
}
Variable erf(const Variable& x, const std::source_location& location) {
  return elementwise("Erf", {x}, location);
}
Variable floor(const Variable& x, const std::source_location& location) {
  return elementwise("Floor", {x}, location);
}
Variable ceil(const Variable& x, const std::source_location& location) {
  return elementwise("Ceil", {x}, location);
}
Variable round(const Variable& x, const std::source_location& location) {
  return elementwise("Round", {x}, location);
}
Variable logical_not(const Variable& x, const std::source_location& location) {
  return elementwise("Not", {x}, location);
}
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
