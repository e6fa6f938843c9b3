// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/dtype.h"

#include <array>

namespace tscope {
namespace {
constexpr std::array<std::string_view, kNumDTypes> kNames = {"bool",  "int8",    "uint8",  "int32",
                                                             "int64", "float32", "float64"};
}  // namespace

std::string_view dtype_name(DType dtype) noexcept { return kNames[static_cast<int>(dtype)]; }

std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kNames[i] == name) return static_cast<DType>(i);
  }
  return std::nullopt;
}

bool is_integral(DType dtype) noexcept {
  return dtype == DType::Int8 || dtype == DType::UInt8 || dtype == DType::Int32 ||
         dtype == DType::Int64;
}

bool is_signed(DType dtype) noexcept { return dtype != DType::UInt8 && dtype != DType::Bool; }

DType promote_different_types(DType a, DType b) noexcept {
  if (is_floating(a) || is_floating(b)) {
    if (a == DType::Float64 || b == DType::Float64) return DType::Float64;
    // float32 with a wide integer stays float32, as in PyTensor's floatX-friendly rule.
    return DType::Float32;
  }
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  // Both integral and different.
  if ((a == DType::Int8 && b == DType::UInt8) || (a == DType::UInt8 && b == DType::Int8)) {
    return DType::Int32;
  }
  return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

}  // namespace tscope
