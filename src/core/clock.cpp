// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/clock.h"

#include <chrono>

namespace tscope {
namespace {
std::int64_t read_steady_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// Initialised during static initialisation of the library, i.e. at load time.
const std::int64_t kLoadTimeNs = read_steady_ns();
}  // namespace

std::int64_t SteadyClock::now_ns() noexcept { return read_steady_ns(); }

Clock& steady_clock() noexcept {
  // Leaked: timed from exit handlers.
  static SteadyClock& clock = *new SteadyClock();
  return clock;
}

std::int64_t ns_since_library_load() noexcept { return read_steady_ns() - kLoadTimeNs; }

}  // namespace tscope
