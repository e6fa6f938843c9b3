// SPDX-License-Identifier: Apache-2.0
#pragma once
// Scalar arithmetic shared by elementwise functors, with every case defined: signed integer
// overflow wraps (two's complement, as NumPy does) instead of being undefined behaviour, integer
// division by zero gives 0 (NumPy's result, without its warning), and the transcendental helpers
// are written to neither overflow nor lose precision.
#include <cmath>
#include <concepts>
#include <type_traits>

namespace tscope::ops::detail {

/// Signed integers at least as wide as int, whose arithmetic does not promote and can overflow.
template <class C>
concept WideSigned = std::signed_integral<C> && sizeof(C) >= sizeof(int);

template <class C>
C wrapping_add(C a, C b) {
  if constexpr (WideSigned<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return static_cast<C>(a + b);
  }
}

template <class C>
C wrapping_sub(C a, C b) {
  if constexpr (WideSigned<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return static_cast<C>(a - b);
  }
}

template <class C>
C wrapping_mul(C a, C b) {
  if constexpr (WideSigned<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return static_cast<C>(a * b);
  }
}

template <class C>
C wrapping_neg(C a) {
  return wrapping_sub(C{0}, a);
}

/// Floor division, rounding toward minus infinity (NumPy's floor_divide). Integers: x // 0 = 0,
/// and INT_MIN // -1 wraps to INT_MIN. Floats: floor(a / b), so x // 0 is +-inf or nan.
template <class C>
C floor_div(C a, C b) {
  if constexpr (std::floating_point<C>) {
    return std::floor(a / b);
  } else {
    if (b == 0) return C{0};
    if constexpr (std::signed_integral<C>) {
      if (b == C{-1}) return wrapping_neg(a);
      const C quotient = static_cast<C>(a / b);
      // C++ truncates toward zero; step down when the exact quotient was negative and inexact.
      const bool inexact = static_cast<C>(quotient * b) != a;
      return (inexact && ((a < 0) != (b < 0))) ? static_cast<C>(quotient - 1) : quotient;
    } else {
      return static_cast<C>(a / b);
    }
  }
}

/// Remainder whose sign follows the divisor (NumPy's mod, Python's %): a - floor(a / b) * b.
/// Integers: x % 0 = 0. Floats: x % 0 is nan, as fmod gives.
template <class C>
C floor_mod(C a, C b) {
  if constexpr (std::floating_point<C>) {
    C remainder = std::fmod(a, b);
    if (remainder != 0 && ((remainder < 0) != (b < 0))) remainder += b;
    return remainder;
  } else {
    if (b == 0) return C{0};
    if constexpr (std::signed_integral<C>) {
      if (b == C{-1}) return C{0};  // also avoids INT_MIN % -1, which traps
      const C remainder = static_cast<C>(a % b);
      return (remainder != 0 && ((remainder < 0) != (b < 0))) ? static_cast<C>(remainder + b)
                                                              : remainder;
    } else {
      return static_cast<C>(a % b);
    }
  }
}

/// Round half to even (banker's rounding, NumPy's round): 0.5 -> 0, 1.5 -> 2, -2.5 -> -2.
/// Independent of the floating-point rounding mode, unlike nearbyint.
template <class C>
C round_half_to_even(C a) {
  const C rounded = std::round(a);  // half away from zero
  if (std::fabs(a - std::trunc(a)) == C{0.5}) return C{2} * std::round(a / C{2});
  return rounded;
}

/// 1 / (1 + exp(-x)) without overflow: exp is only taken of -|x|.
template <std::floating_point C>
C stable_sigmoid(C x) {
  const C e = std::exp(-std::fabs(x));
  const C r = C{1} / (C{1} + e);
  return x >= 0 ? r : e * r;
}

/// log(1 + exp(x)) without overflow or cancellation: max(x, 0) + log1p(exp(-|x|)).
template <std::floating_point C>
C stable_softplus(C x) {
  return std::fmax(x, C{0}) + std::log1p(std::exp(-std::fabs(x)));
}

}  // namespace tscope::ops::detail
