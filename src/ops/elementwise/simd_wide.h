// SPDX-License-Identifier: Apache-2.0
#pragma once
// Wider vectors for the unary "simd" ops: SLEEF's 256-bit (AVX2 + FMA) and 512-bit (AVX-512 F +
// DQ) functions, chosen at run time by the CPU, where the build itself targets any x86-64 and
// simd_loop.h's own loop uses 128-bit vectors. A 512-bit call computes four times the lanes of a
// 128-bit one, and transcendental ops (an LSTM's gates, a GELU's erf) are bound by that
// arithmetic, not by memory.
//
// The kernels live in two files compiled with those instruction sets
// (simd_wide_avx2.cpp, simd_wide_avx512.cpp, both from simd_wide_kernels.inc), and run only on a
// CPU that has them. Like the 128-bit loop, each pads the tail of a range by repeating its last
// element and runs it through the same vector code, so an element's rounding does not depend on
// its position.
#include <cstdint>

namespace tscope::ops::detail {

/// The unary ops with wide kernels (each op's Simd policy names its entry as `kWide`).
enum class WideUnary {
  Exp,
  Exp2,
  Expm1,
  Log,
  Log2,
  Log10,
  Log1p,
  Sin,
  Cos,
  Tanh,
  Erf,
  Sqrt,
  Sigmoid,
  Softplus,
  Count
};

/// out[i] = f(in[i]) for i < n.
template <class C>
using WideKernel = void (*)(const C* in, C* out, std::int64_t n);

struct WideKernels {
  WideKernel<float> f32 = nullptr;
  WideKernel<double> f64 = nullptr;
};

/// The member of `kernels` for C (float or double).
template <class C>
[[nodiscard]] WideKernel<C> kernel_for(const WideKernels& kernels) noexcept {
  if constexpr (sizeof(C) == sizeof(float)) {
    return kernels.f32;
  } else {
    return kernels.f64;
  }
}

/// The widest kernels this CPU runs for `fn`: 512-bit, else 256-bit, else none (null members:
/// the caller's 128-bit loop runs).
[[nodiscard]] const WideKernels& wide_kernels(WideUnary fn) noexcept;

/// The kernels of one width (256 or 512 bits) for `fn`, or none when this CPU lacks that
/// instruction set (tests compare every width the machine has).
[[nodiscard]] WideKernels wide_kernels_of_width(WideUnary fn, int bits) noexcept;

// Tables of each width (simd_wide_avx2.cpp, simd_wide_avx512.cpp), indexed by WideUnary.
const WideKernels* wide_kernels_avx2() noexcept;
const WideKernels* wide_kernels_avx512() noexcept;

}  // namespace tscope::ops::detail
