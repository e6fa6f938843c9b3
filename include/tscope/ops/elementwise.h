// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Elementwise arithmetic and math builders and C++ operators on Variables. Every builder records
/// the user's call site. Comparisons, logic, selection and casts are in elementwise_more.h.
///
///   Variable x = matrix(DType::Float32, "x");
///   Variable y = 2.0 * exp(-x) + x;   // Elemwise{mul}, Elemwise{exp}, Elemwise{neg}, ...
///
/// Integer semantics follow NumPy: overflow wraps, int_div floors (-7 // 2 == -4), mod takes the
/// divisor's sign (-7 % 3 == 2), and integer division or remainder by zero gives 0.
#include <source_location>

#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

/// A Variable or a number, remembering where the expression was written. Numbers become constants
/// of the other operand's dtype (so `2 * x` keeps x float32, as Theano's autocast does).
class Operand {
 public:
  Operand(const Variable& variable,  // NOLINT(google-explicit-constructor): operator sugar
          std::source_location location = std::source_location::current())
      : variable_(variable), location_(location) {}
  Operand(double number,  // NOLINT(google-explicit-constructor)
          std::source_location location = std::source_location::current())
      : number_(number), is_number_(true), location_(location) {}
  Operand(int number,  // NOLINT(google-explicit-constructor)
          std::source_location location = std::source_location::current())
      : number_(number), is_number_(true), location_(location) {}

  [[nodiscard]] bool is_number() const noexcept { return is_number_; }
  [[nodiscard]] double number() const noexcept { return number_; }
  [[nodiscard]] const Variable& variable() const noexcept { return variable_; }
  [[nodiscard]] const std::source_location& location() const noexcept { return location_; }
  /// The Variable, or a constant of `like`'s dtype for a number.
  [[nodiscard]] Variable as_variable(DType like) const;

 private:
  Variable variable_;
  double number_ = 0;
  bool is_number_ = false;
  std::source_location location_;
};

Variable operator+(const Operand& a, const Operand& b);
Variable operator-(const Operand& a, const Operand& b);
Variable operator*(const Operand& a, const Operand& b);
Variable operator/(const Operand& a, const Operand& b);
/// mod(a, b): remainder with the divisor's sign.
Variable operator%(const Operand& a, const Operand& b);
Variable operator-(const Operand& a);

/// Applies a registered elementwise op by name ("Add", "Exp", ...) to operands; numbers become
/// constants of the first Variable operand's dtype.
Variable elementwise(std::string_view op_name,
                     std::initializer_list<Operand> operands,
                     const std::source_location& location = std::source_location::current());

Variable add(const Operand& a,
             const Operand& b,
             const std::source_location& location = std::source_location::current());
Variable sub(const Operand& a,
             const Operand& b,
             const std::source_location& location = std::source_location::current());
Variable mul(const Operand& a,
             const Operand& b,
             const std::source_location& location = std::source_location::current());
/// a / b in floating point; integer inputs give float.
Variable true_div(const Operand& a,
                  const Operand& b,
                  const std::source_location& location = std::source_location::current());
/// Floor division a // b in the inputs' dtype.
Variable int_div(const Operand& a,
                 const Operand& b,
                 const std::source_location& location = std::source_location::current());
/// Remainder with the sign of b, so that a == int_div(a, b) * b + mod(a, b).
Variable mod(const Operand& a,
             const Operand& b,
             const std::source_location& location = std::source_location::current());
/// a to the power b in floating point.
Variable pow(const Operand& a,
             const Operand& b,
             const std::source_location& location = std::source_location::current());
Variable maximum(const Operand& a,
                 const Operand& b,
                 const std::source_location& location = std::source_location::current());
Variable minimum(const Operand& a,
                 const Operand& b,
                 const std::source_location& location = std::source_location::current());
/// min(max(x, low), high).
Variable clip(const Operand& x,
              const Operand& low,
              const Operand& high,
              const std::source_location& location = std::source_location::current());

Variable neg(const Variable& x,
             const std::source_location& location = std::source_location::current());
Variable abs(const Variable& x,
             const std::source_location& location = std::source_location::current());
/// -1, 0 or 1 in x's dtype.
Variable sgn(const Variable& x,
             const std::source_location& location = std::source_location::current());
Variable sqr(const Variable& x,
             const std::source_location& location = std::source_location::current());
Variable sqrt(const Variable& x,
              const std::source_location& location = std::source_location::current());
/// 1 / x (Theano's inv).
Variable reciprocal(const Variable& x,
                    const std::source_location& location = std::source_location::current());
Variable exp(const Variable& x,
             const std::source_location& location = std::source_location::current());
Variable exp2(const Variable& x,
              const std::source_location& location = std::source_location::current());
Variable expm1(const Variable& x,
               const std::source_location& location = std::source_location::current());
Variable log(const Variable& x,
             const std::source_location& location = std::source_location::current());
Variable log2(const Variable& x,
              const std::source_location& location = std::source_location::current());
Variable log10(const Variable& x,
               const std::source_location& location = std::source_location::current());
Variable log1p(const Variable& x,
               const std::source_location& location = std::source_location::current());
Variable tanh(const Variable& x,
              const std::source_location& location = std::source_location::current());
/// 1 / (1 + exp(-x)), stable for any x.
Variable sigmoid(const Variable& x,
                 const std::source_location& location = std::source_location::current());
/// log(1 + exp(x)), stable for any x.
Variable softplus(const Variable& x,
                  const std::source_location& location = std::source_location::current());
Variable sin(const Variable& x,
             const std::source_location& location = std::source_location::current());
Variable cos(const Variable& x,
             const std::source_location& location = std::source_location::current());
Variable erf(const Variable& x,
             const std::source_location& location = std::source_location::current());
Variable floor(const Variable& x,
               const std::source_location& location = std::source_location::current());
Variable ceil(const Variable& x,
              const std::source_location& location = std::source_location::current());
/// Nearest whole number, ties to even (NumPy's round; Theano's round_half_to_even).
Variable round(const Variable& x,
               const std::source_location& location = std::source_location::current());
/// max(x, 0).
Variable relu(const Variable& x,
              const std::source_location& location = std::source_location::current());

}  // namespace tscope

#pragma GCC visibility pop
