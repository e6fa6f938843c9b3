// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Typed constructors for graph inputs, constants and shared variables.
///
///   Variable x = matrix(DType::Float32, "x");              // (?, ?)
///   Variable b = vector(DType::Float32, "b", {10});         // static length 10
///   Variable w = shared(Tensor::zeros(DType::Float32, {784, 10}), "w");
#include <source_location>
#include <string>

#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

/// An input of rank dims.rank(); use kUnknownDim for dims known only at call time.
Variable tensor(DType dtype, const Dims& dims, std::string name = "",
                const std::source_location& location = std::source_location::current());
Variable scalar(DType dtype, std::string name = "",
                const std::source_location& location = std::source_location::current());
Variable vector(DType dtype, std::string name = "", Dims dims = {kUnknownDim},
                const std::source_location& location = std::source_location::current());
Variable matrix(DType dtype, std::string name = "", Dims dims = {kUnknownDim, kUnknownDim},
                const std::source_location& location = std::source_location::current());
Variable tensor3(DType dtype, std::string name = "",
                 const std::source_location& location = std::source_location::current());
Variable tensor4(DType dtype, std::string name = "",
                 const std::source_location& location = std::source_location::current());
Variable tensor5(DType dtype, std::string name = "",
                 const std::source_location& location = std::source_location::current());
/// A constant.
Variable constant(const Tensor& value, std::string name = "",
                  const std::source_location& location = std::source_location::current());
/// A shared variable: named, persistent, settable (set_value), updated by functions. Its type has
/// the value's dtype and rank with unknown dims, so later values may change shape.
Variable shared(const Tensor& value, std::string name,
                const std::source_location& location = std::source_location::current());
/// A shared variable whose type fixes every dim to the value's: axes of extent 1 broadcast, and
/// set_value accepts only values of this shape (model weights imported from a file).
Variable shared_fixed_shape(const Tensor& value, std::string name,
                            const std::source_location& location = std::source_location::current());

}  // namespace tscope

#pragma GCC visibility pop
