// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Reductions over axes (CAReduce family), their arg-variants and the moments built from them.
///
///   Variable total = sum(x);                            // every axis
///   Variable rows = sum(x, {1}, /*keepdims=*/true);
///   Variable best = argmax(logits, {-1});               // int64
///
/// Axes may be negative (counted from the end), repeated (counted once) and non-consecutive; an
/// empty list means every axis. Printed names follow Theano: CAReduce{add}{0,1}, CAReduce{mul}{1},
/// CAReduce{maximum}{1}, CAReduce{minimum}{1}, CAReduce{or}{0}, CAReduce{and}{0},
/// CAReduce{mean}{1}, Argmax{1}, Argmin{1}, with a trailing {keepdims} when dims are kept.
///
/// Output dtypes: sum and prod of integers or bool give int64; mean of integers gives float64;
/// max and min keep the dtype; any and all give bool; argmax and argmin give int64.
#include <cstdint>
#include <source_location>
#include <vector>

#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

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
/// Product over `axes`; the gradient is exact where factors are zero.
Variable prod(const Variable& x, const std::vector<std::int64_t>& axes = {}, bool keepdims = false,
              const std::source_location& location = std::source_location::current());
/// Maximum over `axes`; the gradient goes to every element equal to the maximum (ties share it
/// in full, as in Theano).
Variable max(const Variable& x, const std::vector<std::int64_t>& axes = {}, bool keepdims = false,
             const std::source_location& location = std::source_location::current());
/// Minimum over `axes`; gradient as for max.
Variable min(const Variable& x, const std::vector<std::int64_t>& axes = {}, bool keepdims = false,
             const std::source_location& location = std::source_location::current());
/// Logical or over `axes` (non-zero is true); bool output, zero gradient.
Variable any(const Variable& x, const std::vector<std::int64_t>& axes = {}, bool keepdims = false,
             const std::source_location& location = std::source_location::current());
/// Logical and over `axes`; bool output, zero gradient.
Variable all(const Variable& x, const std::vector<std::int64_t>& axes = {}, bool keepdims = false,
             const std::source_location& location = std::source_location::current());
/// Position of the maximum (int64; over several axes, the flat index in the reduced block; the
/// first of equal values wins).
Variable argmax(const Variable& x, const std::vector<std::int64_t>& axes = {}, bool keepdims = false,
                const std::source_location& location = std::source_location::current());
/// Position of the minimum.
Variable argmin(const Variable& x, const std::vector<std::int64_t>& axes = {}, bool keepdims = false,
                const std::source_location& location = std::source_location::current());
/// Population variance (divides by the count, as Theano's var), composed as
/// mean(sqr(x - mean(x, axes, keepdims=true)), axes, keepdims): two passes, so no cancellation.
Variable var(const Variable& x, const std::vector<std::int64_t>& axes = {}, bool keepdims = false,
             const std::source_location& location = std::source_location::current());
/// Population standard deviation: sqrt(var(x, axes, keepdims)). Named stddev because a function
/// called `std` inside namespace tscope would hide namespace ::std.
Variable stddev(const Variable& x, const std::vector<std::int64_t>& axes = {}, bool keepdims = false,
                const std::source_location& location = std::source_location::current());

}  // namespace tscope

#pragma GCC visibility pop
