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

Variable elementwise(std::string_view op_name, std::initializer_list<Operand> operands,
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
Variable operator-(const Operand& a) {
  return neg(a.as_variable(DType::Float64), a.location());
}

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
Variable maximum(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("Maximum", {a, b}, location);
}
Variable ge(const Operand& a, const Operand& b, const std::source_location& location) {
  return elementwise("GE", {a, b}, location);
}
Variable neg(const Variable& x, const std::source_location& location) {
  return elementwise("Neg", {x}, location);
}
Variable exp(const Variable& x, const std::source_location& location) {
  return elementwise("Exp", {x}, location);
}
Variable log(const Variable& x, const std::source_location& location) {
  return elementwise("Log", {x}, location);
}
Variable sqr(const Variable& x, const std::source_location& location) {
  return elementwise("Sqr", {x}, location);
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
