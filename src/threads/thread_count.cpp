// SPDX-License-Identifier: Apache-2.0
#include "tscope/threads/thread_count.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "openmp_runtime.h"
#include "tscope/core/error.h"

namespace tscope::threads {

int thread_count() { return std::max(omp_get_max_threads(), 1); }

void set_thread_count(int threads) {
  if (threads < 1) {
    throw_error(ErrorKind::InvalidArgument, "thread count must be at least 1, got {}", threads);
  }
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

ScopedThreadCount::ScopedThreadCount(int threads)
    : previous_(thread_count()), previous_blas_(std::max(openblas_get_num_threads(), 1)) {
  set_thread_count(threads);
}

ScopedThreadCount::~ScopedThreadCount() {
  omp_set_num_threads(previous_);
  openblas_set_num_threads(previous_blas_);
}

SerialScope::SerialScope() noexcept {
  const int threads = omp_get_max_threads();
  if (threads <= 1) return;
  previous_ = threads;
  omp_set_num_threads(1);
}

SerialScope::~SerialScope() {
  if (previous_ > 0) omp_set_num_threads(previous_);
}

std::string describe_threads() {
  const int threads = thread_count();
  if (const char* policy = std::getenv(kWaitPolicyVariable)) {
    return fmt::format("{} threads, wait policy {}", threads, policy);
  }
  if (const char* spin = std::getenv(kSpinCountVariable)) {
    return fmt::format("{} threads, wait policy spin {} then sleep", threads, spin);
  }
  return fmt::format("{} threads, wait policy default (spin, then sleep)", threads);
}

}  // namespace tscope::threads
