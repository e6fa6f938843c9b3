// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The static type of a Variable: dtype, rank and the dimensions known at graph-build time.
#include <cstdint>
#include <string>
#include <string_view>

#include "tscope/core/dims.h"
#include "tscope/core/dtype.h"

#pragma GCC visibility push(default)

namespace tscope {

class Tensor;

/// Marks a dimension whose extent is known only at call time.
inline constexpr std::int64_t kUnknownDim = -1;

struct Type {
  DType dtype = DType::Float32;
  Dims dims;  ///< one entry per axis; kUnknownDim where not known

  [[nodiscard]] int rank() const noexcept { return dims.rank(); }
  /// True when the axis is statically 1 (Theano's "broadcastable").
  [[nodiscard]] bool is_broadcastable(int axis) const noexcept { return dims[axis] == 1; }
  [[nodiscard]] bool is_fully_known() const noexcept;
  /// True when `tensor` has this dtype and rank and agrees with every known dim.
  [[nodiscard]] bool accepts(const Tensor& tensor) const noexcept;
  /// "TensorType(float32, (?, 784))"
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const Type& a, const Type& b) noexcept = default;
};

/// Throws InvalidArgument naming `what` and the dims when a known dim is negative or the known
/// dims' byte count overflows (checked_byte_count). Run on every input and inferred type, so
/// static shapes are safe to multiply afterwards.
void check_type_extents(const Type& type, std::string_view what);

/// A type with all dims unknown.
[[nodiscard]] Type unknown_dims_type(DType dtype, int rank);

}  // namespace tscope

#pragma GCC visibility pop
