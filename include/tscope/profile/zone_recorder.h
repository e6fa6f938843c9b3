// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The recording side of host zones (zones.h): turns every thread's records into the HostRecord
/// model, and the knobs that code outside the hot path needs (run-time sites, thread names, an
/// injected clock for tests).
///
/// Threads: each thread that records gets a buffer, registered once with a process-wide list
/// (that registration locks; entering and leaving zones does not). A thread that ends hands its
/// buffer's data to the list, so nothing it recorded is lost. Memory grows with the number of
/// distinct call-tree paths, not with the number of calls.
#include <cstdint>
#include <string>
#include <string_view>

#include "tscope/profile/profile.h"
#include "tscope/profile/zones.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

/// A site made at run time (a graph Function's name), kept for the life of the process; the same
/// (name, file, line, kind) gives the same pointer. Thread-safe; locks.
[[nodiscard]] const ZoneSite* intern_zone_site(std::string_view name,
                                               std::string_view file,
                                               std::uint32_t line,
                                               ZoneKind kind);

/// Names the calling thread in the report ("loader 3"); thread-safe. Allocates nothing for the
/// zones themselves: a thread that never records is not listed.
void set_zone_thread_name(std::string_view name);

/// Every thread's zones so far, as the model. Safe while other threads record: each thread's
/// finished zones up to the moment its buffer is read are included.
[[nodiscard]] HostRecord snapshot_host_zones();

/// Now on the zone clock, in ns (the measured tick source converted, steady_clock, or the
/// injected test clock): what zone, step and worker times are measured against.
[[nodiscard]] std::int64_t zone_clock_ns() noexcept;

/// Zone calls recorded so far, over all threads (cheap; for "did anything run since").
[[nodiscard]] std::int64_t host_zone_record_count() noexcept;

/// Reads ticks from `read_ticks` (1 tick = 1 ns) instead of the measured tick source; nullptr
/// restores it. For tests: call only while no thread is inside a zone.
void set_zone_clock_for_testing(std::int64_t (*read_ticks)()) noexcept;

/// Forgets every recorded zone and every exited thread's data (tests). Call only while no thread
/// is inside a zone; live threads keep their buffers, emptied.
void reset_host_zones();

/// Measures the cost of one zone enter+exit on this machine with the current clock (a few
/// hundred microseconds; records into a private buffer, not the calling thread's).
[[nodiscard]] double measure_zone_overhead_ns();

}  // namespace tscope::profile

#pragma GCC visibility pop
