// SPDX-License-Identifier: Apache-2.0
#pragma once
// The injected zone clock of the zone, step and worker-process tests: each read advances 10 ns on
// the reading thread, so every recorded time is an exact count of clock reads.
#include <cstdint>

#include "support/test_util.h"
#include "tscope/profile/zone_recorder.h"

namespace tscope::zone_test {

inline constexpr std::int64_t kTickNs = 10;

inline std::int64_t per_thread_ticks() {
  thread_local std::int64_t now_ns = 0;
  now_ns += kTickNs;
  return now_ns;
}

/// Zones on, on the injected clock, with nothing recorded yet; everything undone afterwards.
class InjectedClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    profile::set_zone_clock_for_testing(per_thread_ticks);
    profile::reset_host_zones();
    profile::set_zones_enabled(true);
  }
  void TearDown() override {
    profile::set_zones_enabled(false);
    profile::reset_host_zones();
    profile::set_zone_clock_for_testing(nullptr);
  }
};

}  // namespace tscope::zone_test
