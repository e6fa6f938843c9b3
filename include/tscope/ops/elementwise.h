// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Elementwise builders and C++ operators on Variables. Every builder records the user's call site.
///
///   Variable x = matrix(DType::Float32, "x");
///   Variable y = 2.0 * exp(-x) + x;   // Elemwise{mul}, Elemwise{exp}, Elemwise{neg}, ...
#include <source_location>

#include "tscope/graph/variable.h"

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
Variable operator-(const Operand& a);

/// Applies a registered elementwise op by name ("Add", "Exp", ...) to operands; numbers become
/// constants of the first Variable operand's dtype.
Variable elementwise(std::string_view op_name, std::initializer_list<Operand> operands,
                     const std::source_location& location = std::source_location::current());

Variable add(const Operand& a, const Operand& b,
             const std::source_location& location = std::source_location::current());
Variable sub(const Operand& a, const Operand& b,
             const std::source_location& location = std::source_location::current());
Variable mul(const Operand& a, const Operand& b,
             const std::source_location& location = std::source_location::current());
Variable true_div(const Operand& a, const Operand& b,
                  const std::source_location& location = std::source_location::current());
Variable neg(const Variable& x,
             const std::source_location& location = std::source_location::current());
Variable exp(const Variable& x,
             const std::source_location& location = std::source_location::current());
Variable log(const Variable& x,
             const std::source_location& location = std::source_location::current());
Variable maximum(const Operand& a, const Operand& b,
                 const std::source_location& location = std::source_location::current());
Variable sqr(const Variable& x,
             const std::source_location& location = std::source_location::current());
/// max(x, 0).
Variable relu(const Variable& x,
              const std::source_location& location = std::source_location::current());

}  // namespace tscope
