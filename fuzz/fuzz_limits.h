// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the fuzz targets run. A tensor of up to 2^20 elements is cheap. One too large for the
// allocation cap (fuzz_limits.cpp) fails at once, and must fail cleanly, so it runs too; so does
// one whose element count overflows int64, which the library must refuse itself. Sizes in
// between are legitimate but take seconds to fill or compute under the sanitizers, which would
// only make libFuzzer report timeouts: the targets skip them.
#include <cstdint>

#include "tscope/core/dims.h"

namespace tscope::fuzz {

inline constexpr std::int64_t kMaxAllocationBytes = std::int64_t{256} << 20;
inline constexpr std::int64_t kCheapElements = std::int64_t{1} << 20;

/// Whether a value of `dims` (negative extents: unknown, counted as 1) is too slow to run.
inline bool slow_to_run(const Dims& dims) {
  std::int64_t count = 1;
  for (const std::int64_t extent : dims) {
    if (extent < 0) continue;
    if (__builtin_mul_overflow(count, extent, &count)) return false;
  }
  // One byte per element is the smallest dtype: above this, no dtype fits under the cap.
  return count > kCheapElements && count <= kMaxAllocationBytes;
}

}  // namespace tscope::fuzz
