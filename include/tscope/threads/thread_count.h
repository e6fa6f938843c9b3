// SPDX-License-Identifier: Apache-2.0
#pragma once
// How many threads Tensorscope's parallel work uses. There is one pool of worker threads: the
// OpenMP runtime that oneDNN's library links (libgomp on Debian). oneDNN's primitives, the
// parallel loops of parallel_for.h and OpenBLAS's products all take their thread count from here,
// so no second pool competes for the cores (docs/performance.md, "Threads").
//
// The count follows OpenMP's rule: it belongs to the thread that sets it and applies to the
// parallel work that thread starts. A thread that never set it uses the process default
// (OMP_NUM_THREADS, else one per CPU).
#include <string>

#pragma GCC visibility push(default)

namespace tscope::threads {

/// The threads that parallel work started by the calling thread may use (at least 1).
[[nodiscard]] int thread_count();

/// Sets that count for the calling thread: oneDNN's primitives and the parallel loops it starts
/// run on at most `threads` threads, and OpenBLAS (a process-wide setting) on `threads` too.
/// Throws InvalidArgument when `threads` < 1.
void set_thread_count(int threads);

/// Sets the calling thread's count for the life of the scope, then restores the previous counts
/// (the OpenMP and the OpenBLAS one).
class ScopedThreadCount {
 public:
  explicit ScopedThreadCount(int threads);
  ~ScopedThreadCount();
  ScopedThreadCount(const ScopedThreadCount&) = delete;
  ScopedThreadCount& operator=(const ScopedThreadCount&) = delete;

 private:
  int previous_ = 1;
  int previous_blas_ = 1;
};

/// While alive, parallel work this thread starts (oneDNN's primitives included) runs on this
/// thread alone: for work too small to repay waking the other threads, which would then spin
/// beside the caller's next node. Other threads' settings are untouched.
class SerialScope {
 public:
  SerialScope() noexcept;
  ~SerialScope();
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  int previous_ = 0;  // the count to restore; 0: nothing was changed
};

/// The environment variables that set how long idle worker threads spin before they sleep; the
/// runtime reads them once, when it loads.
inline constexpr const char* kWaitPolicyVariable = "OMP_WAIT_POLICY";
inline constexpr const char* kSpinCountVariable = "GOMP_SPINCOUNT";

/// The thread count and wait policy in force, for a profile header:
/// "2 threads, wait policy spin 3000 then sleep".
[[nodiscard]] std::string describe_threads();

}  // namespace tscope::threads

#pragma GCC visibility pop
