// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Overflow-checked arithmetic for element and byte counts. Extents come from untrusted input
/// (model files, .npy headers, --input), and a wrapped count sizes a buffer smaller than the
/// kernels then index, so every count that sizes memory is formed here, once per shape. Hot paths
/// then use Dims::product() on shapes that were checked when they were made.
#include <cstdint>
#include <span>
#include <string_view>

#include "tscope/core/dims.h"
#include "tscope/core/dtype.h"
#include "tscope/core/error.h"

#pragma GCC visibility push(default)

namespace tscope {

/// Largest byte count of one tensor: byte offsets are int64 and the allocator adds its alignment.
inline constexpr std::int64_t kMaxTensorBytes = INT64_MAX - 4096;

/// a * b for non-negative counts; throws `kind` naming `what` and both values when it overflows.
[[nodiscard]] std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view what,
                                       ErrorKind kind = ErrorKind::InvalidArgument);

/// a + b for non-negative counts; throws `kind` naming `what` and both values when it overflows.
[[nodiscard]] std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what,
                                       ErrorKind kind = ErrorKind::InvalidArgument);

/// Element count of `extents`; throws `kind` naming `what` and the shape when an extent is
/// negative or the count overflows int64.
[[nodiscard]] std::int64_t checked_product(std::span<const std::int64_t> extents,
                                           std::string_view what,
                                           ErrorKind kind = ErrorKind::InvalidArgument);
[[nodiscard]] inline std::int64_t checked_product(const Dims& shape, std::string_view what,
                                                  ErrorKind kind = ErrorKind::InvalidArgument) {
  return checked_product(shape.span(), what, kind);
}

/// Bytes of a contiguous `dtype` tensor of `shape`; throws like checked_product, and when the
/// bytes exceed kMaxTensorBytes.
[[nodiscard]] std::int64_t checked_byte_count(const Dims& shape, DType dtype,
                                              std::string_view what,
                                              ErrorKind kind = ErrorKind::InvalidArgument);

}  // namespace tscope

#pragma GCC visibility pop
