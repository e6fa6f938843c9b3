// SPDX-License-Identifier: Apache-2.0
#pragma once
// The float32 error function of the vector kernels. SLEEF's erf costs many times its exp,
// and a GELU is mostly its erf; these two fits cost about one exp:
//  - |x| < kErfSplit: erf(x) = x * P(x^2), P fitted to erf(x) / x;
//  - otherwise: erf(x) = sign(x) * (1 - exp(-a^2) * Q(t)), a = min(|x|, kErfClamp), t = 1 / (1 +
//  a),
//    Q fitted to erfc(a) * exp(a^2), which is smooth and slowly varying where erfc itself falls
//    by eight orders of magnitude. Past kErfClamp erf rounds to 1 in float32.
// Both are least-squares fits in double precision against 30-digit values
// (scripts/fit_erf_coefficients regenerates them); evaluated in float32 with Horner's rule the
// result is within 2.3 ULP of the correctly rounded erf over the whole line (the fit itself is
// within 1e-9), where the wide-kernel test allows 4. A NaN takes the first branch and stays NaN.
// float64 keeps SLEEF's 1-ULP erf.

namespace tscope::ops::detail {

inline constexpr float kErfSplit = 0.875f;
inline constexpr float kErfClamp = 4.0f;

/// P's coefficients, constant term first.
inline constexpr float kErfSmall[] = {1.128379167e+00f,  -3.761263673e-01f, 1.128374098e-01f,
                                      -2.686196868e-02f, 5.207621494e-03f,  -8.220518083e-04f,
                                      8.714059819e-05f};
inline constexpr int kErfSmallCount = sizeof(kErfSmall) / sizeof(kErfSmall[0]);

/// Q's coefficients, constant term first.
inline constexpr float kErfLarge[] = {1.937417555e-05f, 5.634713546e-01f,  5.757062733e-01f,
                                      1.770961630e-01f, 3.152894699e-01f,  -2.869714207e+00f,
                                      4.606442946e+00f, -3.333460033e+00f, 9.740540945e-01f};
inline constexpr int kErfLargeCount = sizeof(kErfLarge) / sizeof(kErfLarge[0]);

}  // namespace tscope::ops::detail
