// SPDX-License-Identifier: Apache-2.0
#include "openmp_setup.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

namespace tscope::cli {

namespace {
constexpr const char* kWaitPolicy = "OMP_WAIT_POLICY";
}  // namespace

// libgomp's idle threads spin for a while after each parallel region. On a machine whose cores
// are busy they take the cores from the next node (a BLAS call, an elementwise loop), and a small
// oneDNN convolution then waits for threads that are descheduled: measured on 2 busy cores, the
// voxel CNN's MaxPool3d went from 14.8 ms to 3.1 ms per call with the passive policy, and tiny
// convolutions from up to 8 ms to tens of microseconds. The policy is read once when libgomp
// loads, before main runs, so setting it now needs a fresh image of the program.
void reexec_with_passive_openmp_wait(char** argv) {
  if (std::getenv(kWaitPolicy) != nullptr) return;
  if (setenv(kWaitPolicy, "passive", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Still here: no /proc (or exec refused). Run on with libgomp's default; the profile header
  // says which policy was in force.
  unsetenv(kWaitPolicy);
}

// The OpenMP runtime arrives with oneDNN's library, not with this program's objects, so it is
// looked up at run time: whichever compiler built the program, no second runtime is pulled in.
std::string openmp_description() {
  using MaxThreads = int (*)();
  auto* max_threads = reinterpret_cast<MaxThreads>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  if (max_threads == nullptr) return "";
  const char* policy = std::getenv(kWaitPolicy);
  return fmt::format("{} threads, wait policy {}", max_threads(),
                     policy != nullptr ? policy : "default (spin, then sleep)");
}

void set_openmp_threads(int threads) {
  using SetThreads = void (*)(int);
  auto* set_threads = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (set_threads != nullptr) set_threads(threads);
}

}  // namespace tscope::cli
