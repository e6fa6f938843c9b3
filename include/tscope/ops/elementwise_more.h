// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Elementwise builders beyond arithmetic: comparisons, casts, selection.
#include <source_location>

#include "tscope/ops/elementwise.h"

namespace tscope {

Variable ge(const Operand& a, const Operand& b,
            const std::source_location& location = std::source_location::current());
/// `value` broadcast to the shape of `like` (Theano's second); `like` only gives the shape.
Variable second(const Variable& like, const Variable& value,
                const std::source_location& location = std::source_location::current());
Variable cast(const Variable& x, DType dtype,
              const std::source_location& location = std::source_location::current());

}  // namespace tscope
