// SPDX-License-Identifier: Apache-2.0
#include "tscope/profile/tick_clock.h"

#include <algorithm>
#include <chrono>

#if TSCOPE_HAVE_RDTSC
#include <cpuid.h>
#endif

namespace tscope::profile {
namespace {

std::int64_t steady_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool has_invariant_tsc() noexcept {
#if TSCOPE_HAVE_RDTSC
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000U, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007U) return false;
  if (__get_cpuid(0x80000007U, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1U << 8)) != 0;  // "invariant TSC": constant rate across P/C-states
#else
  return false;
#endif
}

// Cost of one read, the minimum over several batches (the least disturbed one).
template <typename Read>
double read_cost_ns(Read read) {
  constexpr int kReads = 2000;
  double best_ns = 1e9;
  for (int batch = 0; batch < 5; ++batch) {
    std::int64_t sink = 0;
    const std::int64_t start_ns = steady_ns();
    for (int i = 0; i < kReads; ++i) sink += read();
    const std::int64_t stop_ns = steady_ns();
    // Keep the reads from being optimised away.
    asm volatile("" : : "r"(sink) : "memory");
    best_ns = std::min(best_ns, static_cast<double>(stop_ns - start_ns) / kReads);
  }
  return best_ns;
}

TickSource measure() {
  TickSource source;
  source.steady_read_cost_ns = read_cost_ns(steady_ns);
  source.name = "steady_clock";
  source.read_cost_ns = source.steady_read_cost_ns;
  if (!has_invariant_tsc()) return source;
  source.tsc_read_cost_ns = read_cost_ns(read_tsc);
  // Calibrate over 5 ms of steady time; the error of the two end reads is then below 0.01%.
  const std::int64_t tsc_start = read_tsc();
  const std::int64_t steady_start_ns = steady_ns();
  std::int64_t steady_stop_ns = steady_start_ns;
  while (steady_stop_ns - steady_start_ns < 5'000'000) steady_stop_ns = steady_ns();
  const std::int64_t tsc_stop = read_tsc();
  if (tsc_stop <= tsc_start) return source;
  const double ns_per_tick = static_cast<double>(steady_stop_ns - steady_start_ns) /
                             static_cast<double>(tsc_stop - tsc_start);
  if (source.tsc_read_cost_ns < source.steady_read_cost_ns) {
    source.use_tsc = true;
    source.ns_per_tick = ns_per_tick;
    source.read_cost_ns = source.tsc_read_cost_ns;
    source.name = "rdtsc";
  }
  return source;
}

}  // namespace

const TickSource& measured_tick_source() {
  // Leaked: the exit-time writer reads it after static destruction has begun.
  static const TickSource& source = *new TickSource(measure());
  return source;
}

}  // namespace tscope::profile
