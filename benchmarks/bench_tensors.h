// SPDX-License-Identifier: Apache-2.0
#pragma once
// Deterministic float32 inputs for the benchmarks: a fixed linear congruential sequence, so every
// run and every machine times the same values.
#include <cstdint>
#include <vector>

#include "tscope/tscope.h"

namespace tscope::bench {

/// Values uniform in [-width / 2, width / 2) from `seed`.
inline Tensor filled_tensor(const Dims& shape, std::uint64_t seed, double width) {
  std::vector<double> values(static_cast<std::size_t>(shape.product()));
  std::uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (double& v : values) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    v = (static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5) * width;
  }
  return Tensor::from_doubles(DType::Float32, shape, values);
}

}  // namespace tscope::bench
