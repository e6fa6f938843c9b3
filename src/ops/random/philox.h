// SPDX-License-Identifier: Apache-2.0
#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
// counter-based generator. Each output block is a pure function of (key, counter), so any element
// can be computed independently of the others.
#include <array>
#include <cstdint>

namespace tscope::ops::detail {

using PhiloxBlock = std::array<std::uint32_t, 4>;

inline PhiloxBlock philox4x32(std::uint64_t key, std::uint64_t counter) {
  constexpr std::uint32_t kMultiplier0 = 0xD2511F53u;
  constexpr std::uint32_t kMultiplier1 = 0xCD9E8D57u;
  constexpr std::uint32_t kWeyl0 = 0x9E3779B9u;
  constexpr std::uint32_t kWeyl1 = 0xBB67AE85u;
  PhiloxBlock block{static_cast<std::uint32_t>(counter), static_cast<std::uint32_t>(counter >> 32),
                    0u, 0u};
  std::uint32_t key0 = static_cast<std::uint32_t>(key);
  std::uint32_t key1 = static_cast<std::uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t product0 = static_cast<std::uint64_t>(kMultiplier0) * block[0];
    const std::uint64_t product1 = static_cast<std::uint64_t>(kMultiplier1) * block[2];
    block = {static_cast<std::uint32_t>(product1 >> 32) ^ block[1] ^ key0,
             static_cast<std::uint32_t>(product1),
             static_cast<std::uint32_t>(product0 >> 32) ^ block[3] ^ key1,
             static_cast<std::uint32_t>(product0)};
    key0 += kWeyl0;
    key1 += kWeyl1;
  }
  return block;
}

/// 64 random bits from two words of a block.
inline std::uint64_t bits64(const PhiloxBlock& block, int first) {
  return (static_cast<std::uint64_t>(block[first + 1]) << 32) | block[first];
}

/// A double in [0, 1) with 53 random bits.
inline double unit_double(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

/// SplitMix64's finaliser: spreads a seed over all 64 bits (derives per-draw keys).
inline std::uint64_t mix64(std::uint64_t value) {
  value += 0x9E3779B97F4A7C15ull;
  value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ull;
  value = (value ^ (value >> 27)) * 0x94D049BB133111EBull;
  return value ^ (value >> 31);
}

}  // namespace tscope::ops::detail
