// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Element types of tensors and the rules that combine them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#pragma GCC visibility push(default)

namespace tscope {

/// The element type of a Tensor or Variable. Order matters: promotion picks the larger value
/// inside a kind (bool < integers < floats).
enum class DType : std::uint8_t { Bool, Int8, UInt8, Int32, Int64, Float32, Float64 };

inline constexpr int kNumDTypes = 7;

/// Bytes per element.
[[nodiscard]] inline std::size_t dtype_size(DType dtype) noexcept {
  constexpr std::size_t kSizes[kNumDTypes] = {1, 1, 1, 4, 8, 4, 8};
  return kSizes[static_cast<int>(dtype)];
}
/// Lower-case NumPy spelling: "float32", "int64", "bool", ...
[[nodiscard]] std::string_view dtype_name(DType dtype) noexcept;
/// Parses a NumPy spelling; nullopt when unknown.
[[nodiscard]] std::optional<DType> parse_dtype(std::string_view name) noexcept;
[[nodiscard]] inline bool is_floating(DType dtype) noexcept {
  return dtype == DType::Float32 || dtype == DType::Float64;
}
[[nodiscard]] bool is_integral(DType dtype) noexcept;  // bool excluded
[[nodiscard]] bool is_signed(DType dtype) noexcept;
/// NumPy-style promotion of two array dtypes (int8 + uint8 -> int32 here, a documented
/// simplification: we have no int16).
[[nodiscard]] DType promote_different_types(DType a, DType b) noexcept;
[[nodiscard]] inline DType promote_types(DType a, DType b) noexcept {
  return a == b ? a : promote_different_types(a, b);
}

template <class T>
struct DTypeOf;
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <> struct DTypeOf<std::int8_t> { static constexpr DType value = DType::Int8; };
template <> struct DTypeOf<std::uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct DTypeOf<std::int32_t> { static constexpr DType value = DType::Int32; };
template <> struct DTypeOf<std::int64_t> { static constexpr DType value = DType::Int64; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::Float64; };

template <class T>
inline constexpr DType kDTypeOf = DTypeOf<T>::value;

/// Calls `fn(T{})` with the C++ type of `dtype`; the one place a dtype becomes a type.
template <class Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Bool: return fn(bool{});
    case DType::Int8: return fn(std::int8_t{});
    case DType::UInt8: return fn(std::uint8_t{});
    case DType::Int32: return fn(std::int32_t{});
    case DType::Int64: return fn(std::int64_t{});
    case DType::Float32: return fn(float{});
    case DType::Float64: break;
  }
  return fn(double{});
}

}  // namespace tscope

#pragma GCC visibility pop
