// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The time source of per-node timings, chosen by measurement. The VM reads raw ticks in its
/// profiled loop (rdtsc costs a few ns, a steady_clock read through the vDSO about 20) and
/// converts to nanoseconds only when a profile is snapshotted.
#include <cstdint>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TSCOPE_HAVE_RDTSC 1
#else
#define TSCOPE_HAVE_RDTSC 0
#endif

#pragma GCC visibility push(default)

namespace tscope::profile {

struct TickSource {
  bool use_tsc = false;       ///< read the time-stamp counter; else a tscope::Clock
  double ns_per_tick = 1.0;   ///< calibrated against steady_clock when use_tsc
  double read_cost_ns = 0.0;  ///< measured cost of one read of the chosen source
  double steady_read_cost_ns = 0.0;
  double tsc_read_cost_ns = -1.0;  ///< negative: no usable invariant TSC
  std::string name;                ///< "rdtsc" or "steady_clock"
};

/// Measured once per process (a few milliseconds on first use): rdtsc when the CPU declares an
/// invariant TSC and a read is cheaper than steady_clock, else steady_clock.
[[nodiscard]] const TickSource& measured_tick_source();

/// Raw time-stamp counter; 0 where there is none (never selected then).
[[nodiscard]] inline std::int64_t read_tsc() noexcept {
#if TSCOPE_HAVE_RDTSC
  return static_cast<std::int64_t>(__rdtsc());
#else
  return 0;
#endif
}

}  // namespace tscope::profile

#pragma GCC visibility pop
