// SPDX-License-Identifier: Apache-2.0
#include "tscope/profile/machine_roof.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "tscope/core/clock.h"

namespace tscope::profile {
namespace {

// Two 16 MiB arrays: the size of a large intermediate, measured in a few milliseconds. Where the
// last-level cache holds them the figure is cache bandwidth, which is also what a node with
// intermediates of that size can reach. Best of a few passes: the roof is what the machine can
// do, not its average.
constexpr std::size_t kStreamFloats = std::size_t{4} << 20;
constexpr int kStreamPasses = 3;
constexpr int kFlopBlocks = 200'000;
constexpr int kFlopPasses = 3;
constexpr std::size_t kAccumulators = 32;  // independent chains, so latency does not bound the rate

double best_seconds_of(int passes, auto&& body) {
  std::int64_t best_ns = std::numeric_limits<std::int64_t>::max();
  for (int pass = 0; pass < passes; ++pass) {
    const std::int64_t start_ns = steady_clock().now_ns();
    body();
    best_ns = std::min(best_ns, steady_clock().now_ns() - start_ns);
  }
  return static_cast<double>(std::max<std::int64_t>(best_ns, 1)) * 1e-9;
}

double measure_bandwidth() {
  std::vector<float> source(kStreamFloats, 1.0f);
  std::vector<float> target(kStreamFloats, 0.0f);
  float scale = 1.0f;
  const double seconds = best_seconds_of(kStreamPasses, [&] {
    for (std::size_t i = 0; i < kStreamFloats; ++i) target[i] = source[i] * scale;
    scale += target[kStreamFloats / 2] * 1e-9f;  // keeps each pass's stores observable
  });
  volatile float sink = target[kStreamFloats - 1];
  (void)sink;
  // One read and one write per element.
  return 2.0 * static_cast<double>(kStreamFloats * sizeof(float)) / seconds;
}

double measure_flop_rate() {
  std::array<float, kAccumulators> values{};
  for (std::size_t i = 0; i < kAccumulators; ++i) values[i] = 1.0f + static_cast<float>(i) * 1e-3f;
  volatile float multiplier_source = 0.999999f;
  volatile float addend_source = 1e-7f;
  const float multiplier = multiplier_source;
  const float addend = addend_source;
  const double seconds = best_seconds_of(kFlopPasses, [&] {
    for (int block = 0; block < kFlopBlocks; ++block) {
      for (float& value : values) value = value * multiplier + addend;
    }
  });
  float total = 0;
  for (float value : values) total += value;
  volatile float sink = total;
  (void)sink;
  // A multiply and an add per accumulator and block.
  return 2.0 * static_cast<double>(kAccumulators) * kFlopBlocks / seconds;
}

}  // namespace

const MachineRoof& measured_machine_roof() {
  // Leaked: the exit-time profile writer may read it after static destruction began.
  static const MachineRoof& roof = *new MachineRoof{measure_bandwidth(), measure_flop_rate()};
  return roof;
}

}  // namespace tscope::profile
