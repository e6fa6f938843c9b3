// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Elementwise builders beyond arithmetic: comparisons, logic, selection, casts. Comparisons and
/// logic return bool Variables and have zero gradient.
///
///   Variable inside = logical_and(x > 0.0, x < 1.0);  // Elemwise{and_,no_inplace}, bool
///   Variable y = switch_(inside, x, 0.0);
///
/// == and != are not overloaded: Variable equality is identity; use eq and neq. && and || are not
/// overloaded either (they could not short-circuit); use logical_and and logical_or. Unary ! is
/// logical_not, so test whether a Variable is defined with defined(), not with !v.
#include <source_location>

#include "tscope/ops/elementwise.h"

namespace tscope {

Variable eq(const Operand& a,
            const Operand& b,
            const std::source_location& location = std::source_location::current());
Variable neq(const Operand& a,
             const Operand& b,
             const std::source_location& location = std::source_location::current());
Variable lt(const Operand& a,
            const Operand& b,
            const std::source_location& location = std::source_location::current());
Variable gt(const Operand& a,
            const Operand& b,
            const std::source_location& location = std::source_location::current());
Variable le(const Operand& a,
            const Operand& b,
            const std::source_location& location = std::source_location::current());
Variable ge(const Operand& a,
            const Operand& b,
            const std::source_location& location = std::source_location::current());
Variable operator<(const Operand& a, const Operand& b);
Variable operator>(const Operand& a, const Operand& b);
Variable operator<=(const Operand& a, const Operand& b);
Variable operator>=(const Operand& a, const Operand& b);

/// Logical (not bitwise) operations on bool or integer inputs, nonzero meaning true; bool result.
Variable logical_and(const Operand& a,
                     const Operand& b,
                     const std::source_location& location = std::source_location::current());
Variable logical_or(const Operand& a,
                    const Operand& b,
                    const std::source_location& location = std::source_location::current());
Variable logical_xor(const Operand& a,
                     const Operand& b,
                     const std::source_location& location = std::source_location::current());
Variable logical_not(const Variable& x,
                     const std::source_location& location = std::source_location::current());
// No operator! on Variables: `!v` must keep meaning "v is undefined" (explicit operator bool).

/// Theano's switch (named switch_ because switch is a keyword): a where `condition` is true,
/// else b, broadcasting all three. The condition must be bool.
Variable switch_(const Variable& condition,
                 const Operand& a,
                 const Operand& b,
                 const std::source_location& location = std::source_location::current());
/// `value` broadcast to the shape of `like` (Theano's second); `like` only gives the shape.
Variable second(const Variable& like,
                const Variable& value,
                const std::source_location& location = std::source_location::current());
Variable cast(const Variable& x,
              DType dtype,
              const std::source_location& location = std::source_location::current());

}  // namespace tscope
