// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Time sources in integer nanoseconds. Injectable so golden reports are byte-deterministic.
#include <cstdint>

#pragma GCC visibility push(default)

namespace tscope {

class Clock {
 public:
  virtual ~Clock() = default;
  [[nodiscard]] virtual std::int64_t now_ns() noexcept = 0;
};

/// std::chrono::steady_clock (CLOCK_MONOTONIC through the vDSO).
class SteadyClock final : public Clock {
 public:
  [[nodiscard]] std::int64_t now_ns() noexcept override;
};

/// Advances by a fixed step on every read; for tests.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(std::int64_t step_ns = 1000) : step_ns_(step_ns) {}
  [[nodiscard]] std::int64_t now_ns() noexcept override {
    now_ns_ += step_ns_;
    return now_ns_;
  }
  void set_step_ns(std::int64_t step_ns) noexcept { step_ns_ = step_ns; }

 private:
  std::int64_t step_ns_;
  std::int64_t now_ns_ = 0;
};

/// The process-wide steady clock.
[[nodiscard]] Clock& steady_clock() noexcept;

/// Nanoseconds since the library was loaded (for the profile's globals).
[[nodiscard]] std::int64_t ns_since_library_load() noexcept;

}  // namespace tscope

#pragma GCC visibility pop
