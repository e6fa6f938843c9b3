// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Reductions over axes (CAReduce family).
///
///   Variable total = sum(x);                   // every axis
///   Variable rows = sum(x, {1}, /*keepdims=*/true);
#include <cstdint>
#include <source_location>
#include <vector>

#include "tscope/graph/variable.h"

namespace tscope {

/// Sum over every axis.
Variable sum(const Variable& x, const std::source_location& location = std::source_location::current());
/// Sum over `axes` (negative axes count from the end).
Variable sum(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims = false,
             const std::source_location& location = std::source_location::current());
/// Mean over every axis.
Variable mean(const Variable& x, const std::source_location& location = std::source_location::current());
/// Mean over `axes`.
Variable mean(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims = false,
              const std::source_location& location = std::source_location::current());

}  // namespace tscope
