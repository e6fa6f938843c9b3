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
#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

#include "tscope/ops/elementwise.h"

#pragma GCC visibility push(default)

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

/// A fused elementwise expression (the Composite op, which the fuse_elementwise rewrite builds):
/// `expression` applies elementwise ops by registry name to the inputs i0, i1, ...; statements
/// separated by ';' can be read back as t0, t1, ... ("Exp(i0);Mul(t0,t0)"). The inputs broadcast
/// and must share one float dtype. Throws InvalidArgument (malformed expression, an op that cannot
/// be fused) or TypeMismatch, naming the node.
Variable composite(const std::vector<Variable>& inputs,
                   const std::string& expression,
                   const std::source_location& location = std::source_location::current());
/// The same expression folded over `axes` of the broadcast shape (empty: every axis) by
/// `reduction`, "add" (as Sum) or "maximum" (as Max), without storing its values.
Variable composite_reduce(const std::vector<Variable>& inputs,
                          const std::string& expression,
                          const std::string& reduction,
                          const std::vector<std::int64_t>& axes,
                          bool keepdims,
                          const std::source_location& location = std::source_location::current());

}  // namespace tscope

#pragma GCC visibility pop
