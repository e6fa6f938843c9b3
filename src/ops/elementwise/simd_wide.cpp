// SPDX-License-Identifier: Apache-2.0
// Chooses the wide kernels for this CPU once (simd_wide.h).
#include "simd_wide.h"

namespace tscope::ops::detail {
namespace {

// __builtin_cpu_supports also checks that the OS saves the wider registers.
bool has_avx512() noexcept {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}

bool has_avx2() noexcept { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

const WideKernels* widest_table() noexcept {
  static const WideKernels* table = [] {
    __builtin_cpu_init();
    if (has_avx512()) return wide_kernels_avx512();
    if (has_avx2()) return wide_kernels_avx2();
    return static_cast<const WideKernels*>(nullptr);
  }();
  return table;
}

}  // namespace

const WideKernels& wide_kernels(WideUnary fn) noexcept {
  static constexpr WideKernels kNone{};
  const WideKernels* table = widest_table();
  return table == nullptr ? kNone : table[static_cast<int>(fn)];
}

WideKernels wide_kernels_of_width(WideUnary fn, int bits) noexcept {
  __builtin_cpu_init();
  if (bits == 512 && has_avx512()) return wide_kernels_avx512()[static_cast<int>(fn)];
  if (bits == 256 && has_avx2()) return wide_kernels_avx2()[static_cast<int>(fn)];
  return {};
}

}  // namespace tscope::ops::detail
