// SPDX-License-Identifier: Apache-2.0
#pragma once
/// A fixed-capacity list of dimensions (shape or strides). It never allocates, so kernels and the
/// VM can build shapes on the hot path.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#pragma GCC visibility push(default)

namespace tscope {

inline constexpr int kMaxRank = 8;

class Dims {
 public:
  Dims() = default;
  Dims(std::initializer_list<std::int64_t> values);
  explicit Dims(std::span<const std::int64_t> values);
  /// `rank` copies of `value`.
  static Dims filled(int rank, std::int64_t value);

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] bool empty() const noexcept { return rank_ == 0; }
  [[nodiscard]] std::int64_t operator[](int axis) const noexcept { return values_[axis]; }
  [[nodiscard]] std::int64_t& operator[](int axis) noexcept { return values_[axis]; }
  [[nodiscard]] const std::int64_t* begin() const noexcept { return values_.data(); }
  [[nodiscard]] const std::int64_t* end() const noexcept { return values_.data() + rank_; }
  [[nodiscard]] std::span<const std::int64_t> span() const noexcept { return {begin(), end()}; }

  /// Appends one dimension; throws Unsupported past kMaxRank.
  void push_back(std::int64_t value);
  void resize(int rank, std::int64_t fill = 0);
  /// Product of all values (1 for rank 0). Shapes from input are checked with checked_product
  /// (checked_math.h) when they are made, so an overflow here is a missed check: it throws
  /// Internal naming the shape rather than returning a wrapped count that sizes a short buffer.
  [[nodiscard]] std::int64_t product() const {
    std::int64_t result = 1;
    for (int i = 0; i < rank_; ++i) {
      if (__builtin_mul_overflow(result, values_[i], &result)) throw_product_overflow();
    }
    return result;
  }
  /// "(2, 3)"; rank 0 prints "()"; negative values print as "?".
  [[nodiscard]] std::string to_string() const;

  // Inline and loop-based: shapes are compared on the VM's per-node path.
  friend bool operator==(const Dims& a, const Dims& b) noexcept {
    if (a.rank_ != b.rank_) return false;
    for (int i = 0; i < a.rank_; ++i) {
      if (a.values_[i] != b.values_[i]) return false;
    }
    return true;
  }

 private:
  [[noreturn]] void throw_product_overflow() const;

  std::array<std::int64_t, kMaxRank> values_{};
  int rank_ = 0;
};

/// Row-major strides (in elements) for `shape`.
[[nodiscard]] Dims contiguous_strides(const Dims& shape);

/// NumPy broadcast of two shapes; throws ShapeMismatch naming both.
[[nodiscard]] Dims broadcast_shapes(const Dims& a, const Dims& b);

/// Normalises a possibly negative axis for `rank`; throws IndexOutOfRange.
[[nodiscard]] int normalize_axis(std::int64_t axis, int rank);

}  // namespace tscope

#pragma GCC visibility pop
