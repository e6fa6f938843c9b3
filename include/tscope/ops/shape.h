// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Shape ops: DimShuffle (transpose, add/drop broadcastable axes), Reshape, Flatten, Shape,
/// Shape_i, MakeVector, Alloc (zeros, ones, fill, zeros_like, ones_like), Join, Split, Stack,
/// ARange.
///
///   Variable flat = reshape(x, {-1});                   // static target, one -1 allowed
///   Variable y = reshape(x, shape(z));                  // symbolic target (int64 vector)
///   Variable z0 = zeros({batch, 10}, DType::Float32);   // batch: an int scalar Variable
///   Variable both = join(0, {a, b});                    // concatenate along axis 0
#include <cstdint>
#include <optional>
#include <source_location>
#include <vector>

#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

/// Theano's DimShuffle: output axis i is input axis pattern[i], or a new axis of size 1 where
/// pattern[i] == kNewAxis. Input axes left out must be statically of size 1.
inline constexpr std::int64_t kNewAxis = -1;
Variable dimshuffle(const Variable& x, const std::vector<std::int64_t>& pattern,
                    const std::source_location& location = std::source_location::current());
/// Reverses the axes (x.T).
Variable transpose(const Variable& x,
                   const std::source_location& location = std::source_location::current());

/// One extent of a shape built at graph time: a number or an integer scalar Variable.
class DimArg {
 public:
  DimArg(std::int64_t extent) : extent_(extent) {}  // NOLINT(google-explicit-constructor)
  DimArg(int extent) : extent_(extent) {}           // NOLINT(google-explicit-constructor)
  DimArg(const Variable& extent) : variable_(extent) {}  // NOLINT(google-explicit-constructor)
  /// The Variable, or an int64 constant for a number.
  [[nodiscard]] Variable as_variable() const;

 private:
  Variable variable_;
  std::int64_t extent_ = 0;
};

/// Reshape to a static shape; one entry may be -1 (inferred from the element count). A view when
/// the input is contiguous, a copy otherwise. Printed Reshape{ndim}.
Variable reshape(const Variable& x, const std::vector<std::int64_t>& shape,
                 const std::source_location& location = std::source_location::current());
/// Reshape to a symbolic shape: an int64 vector whose length is statically known; one entry may
/// be -1.
Variable reshape(const Variable& x, const Variable& shape,
                 const std::source_location& location = std::source_location::current());
/// Keeps the first outdim - 1 axes and collapses the rest into one (Theano's Flatten{outdim}).
Variable flatten(const Variable& x, int outdim = 1,
                 const std::source_location& location = std::source_location::current());
/// The int64 vector of x's extents.
Variable shape(const Variable& x, const std::source_location& location = std::source_location::current());
/// The int64 scalar extent of x's axis `axis` (negative counts from the end). Printed Shape_i{i}.
Variable shape_i(const Variable& x, std::int64_t axis,
                 const std::source_location& location = std::source_location::current());
/// A vector from rank-0 Variables (dtype: their promotion).
Variable make_vector(const std::vector<Variable>& scalars,
                     const std::source_location& location = std::source_location::current());
/// `value` broadcast to `dims` (Theano's Alloc). Where value's axis is statically 1 it broadcasts;
/// any other axis must match the target extent (checked at build time when static, else at run
/// time). value's axes align with the trailing target axes.
Variable alloc(const Variable& value, const std::vector<DimArg>& dims,
               const std::source_location& location = std::source_location::current());
Variable zeros(const std::vector<DimArg>& dims, DType dtype,
               const std::source_location& location = std::source_location::current());
Variable ones(const std::vector<DimArg>& dims, DType dtype,
              const std::source_location& location = std::source_location::current());
/// Theano's fill: `value` (a scalar Variable or number) broadcast to the shape of `like`, in
/// value's dtype.
Variable fill(const Variable& like, const Variable& value,
              const std::source_location& location = std::source_location::current());
Variable zeros_like(const Variable& x,
                    const std::source_location& location = std::source_location::current());
Variable ones_like(const Variable& x,
                   const std::source_location& location = std::source_location::current());
/// Concatenates along `axis`; other axes must agree. Dtype: the promotion of the inputs.
Variable join(std::int64_t axis, const std::vector<Variable>& inputs,
              const std::source_location& location = std::source_location::current());
/// Splits along `axis` into pieces of the given extents (which must add up to the axis).
std::vector<Variable> split(const Variable& x, std::int64_t axis,
                            const std::vector<std::int64_t>& sizes,
                            const std::source_location& location = std::source_location::current());
/// Same with symbolic sizes: an int64 vector Variable of statically known length.
std::vector<Variable> split(const Variable& x, std::int64_t axis, const Variable& sizes,
                            const std::source_location& location = std::source_location::current());
/// Stacks same-shaped inputs along a new axis `axis` (a composite: DimShuffle + Join).
Variable stack(const std::vector<Variable>& inputs, std::int64_t axis = 0,
               const std::source_location& location = std::source_location::current());
/// numpy.arange(start, stop, step) from number scalars (Theano's ARange): start, start + step,
/// ... while below stop (above it for a negative step); length max(0, ceil((stop - start) /
/// step)), static when the three values are known at build time. dtype defaults to
/// arange_dtype(). Throws TypeMismatch for inputs that are not number scalars, InvalidArgument
/// for a zero step or a length that overflows (at build time when the values are known, else when
/// the function runs, naming the node). Printed ARange{dtype='int64'}.
Variable arange(const Variable& start,
                const Variable& stop,
                const Variable& step,
                std::optional<DType> dtype = std::nullopt,
                const std::source_location& location = std::source_location::current());
/// Theano's default arange dtype: the promotion of the three, int64 for any integer promotion.
[[nodiscard]] DType arange_dtype(const Variable& start, const Variable& stop, const Variable& step);

}  // namespace tscope

#pragma GCC visibility pop
