// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/checked_math.h"

#include <algorithm>
#include <string>

namespace tscope {
namespace {
std::string extents_text(std::span<const std::int64_t> extents) {
  // Dims::to_string prints negative extents as '?'; here the value itself is the news.
  std::string text = "(";
  for (std::size_t i = 0; i < extents.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(extents[i]);
  }
  return text + (extents.size() == 1 ? ",)" : ")");
}

// Names the first problem of a shape that checked_product rejected. Zero extents count as 1 for
// the overflow: strides are products of the extents after an axis, and they must fit too, even
// where the element count is 0.
[[noreturn, gnu::cold, gnu::noinline]] void throw_bad_extents(std::span<const std::int64_t> extents,
                                                              std::string_view what,
                                                              ErrorKind kind) {
  for (const std::int64_t extent : extents) {
    if (extent < 0) {
      throw_error(kind, "{}: negative extent {} in shape {}", what, extent, extents_text(extents));
    }
  }
  const bool has_zero = std::find(extents.begin(), extents.end(), 0) != extents.end();
  throw_error(kind, "{}: the {} of shape {} overflows a 64-bit count", what,
              has_zero ? "product of the non-zero extents" : "element count",
              extents_text(extents));
}
}  // namespace

std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view what, ErrorKind kind) {
  std::int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) {
    throw_error(kind, "{}: {} * {} overflows a 64-bit count", what, a, b);
  }
  return result;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what, ErrorKind kind) {
  std::int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) {
    throw_error(kind, "{}: {} + {} overflows a 64-bit count", what, a, b);
  }
  return result;
}

std::int64_t checked_product(std::span<const std::int64_t> extents, std::string_view what,
                             ErrorKind kind) {
  // Every tensor allocation passes here, so the common case is one loop without a branch taken;
  // the diagnosis of a bad shape is left to the cold path.
  std::int64_t stride_bound = 1;
  bool has_zero = false;
  for (const std::int64_t extent : extents) {
    if (extent <= 0) {
      if (extent < 0) throw_bad_extents(extents, what, kind);
      has_zero = true;
      continue;
    }
    if (__builtin_mul_overflow(stride_bound, extent, &stride_bound)) {
      throw_bad_extents(extents, what, kind);
    }
  }
  return has_zero ? 0 : stride_bound;
}

std::int64_t checked_byte_count(const Dims& shape, DType dtype, std::string_view what,
                                ErrorKind kind) {
  const std::int64_t count = checked_product(shape, what, kind);
  const auto item = static_cast<std::int64_t>(dtype_size(dtype));
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(count, item, &bytes) || bytes > kMaxTensorBytes) {
    throw_error(kind, "{}: shape {} of {} needs {} * {} bytes, more than a tensor can hold", what,
                shape.to_string(), dtype_name(dtype), count, item);
  }
  return bytes;
}

}  // namespace tscope
