// SPDX-License-Identifier: Apache-2.0
#pragma once
// Busy waiting for another thread, bounded by a deadline. For waits expected to be shorter than a
// sleep and wake-up through the kernel (a few microseconds), where sleeping would also invite the
// scheduler to wake the waiter on the CPU of the thread it waits for.
#include <chrono>
#include <thread>

#pragma GCC visibility push(default)

namespace tscope::threads {

/// Tells the CPU that this thread is spinning (x86 `pause`), which frees the core's resources for
/// a sibling hyperthread; elsewhere yields.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

/// Spins until `done()` is true or `deadline` passes; returns `done()`.
template <class Done>
bool spin_until(const Done& done, std::chrono::steady_clock::time_point deadline) {
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return done();
    cpu_relax();
  }
  return true;
}

}  // namespace tscope::threads

#pragma GCC visibility pop
