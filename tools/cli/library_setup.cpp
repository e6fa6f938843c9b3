// SPDX-License-Identifier: Apache-2.0
#include "library_setup.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "tscope/ops/linalg.h"

namespace tscope::cli {

namespace {
constexpr const char* kWaitPolicy = "OMP_WAIT_POLICY";
constexpr const char* kSpinCount = "GOMP_SPINCOUNT";
// A few microseconds of spinning: long enough to catch the next region of a small primitive (an
// LSTM step, a depthwise convolution), short enough not to take a busy core for long.
constexpr const char* kShortSpin = "3000";
constexpr const char* kBlasCore = "OPENBLAS_CORETYPE";
}  // namespace

// libgomp's idle threads spin after each parallel region, by default for some 300000 iterations
// (a fraction of a millisecond to milliseconds). On a machine whose cores are busy they take the
// cores from the next node (a BLAS call, an elementwise loop), which then runs several times
// slower. But threads that sleep at once must be woken through the kernel for every region, and
// an inference of small primitives pays that on each node. A 3000-iteration spin (a few
// microseconds) keeps the threads awake between one inference's primitives and lets them sleep
// soon after (conv.md, "Kernels", Threads). Both settings are read once when libgomp loads, before main runs, so
// setting them needs a fresh image of the program.
//
// OpenBLAS picks its kernels by CPU model when it loads; a model it does not know gets the oldest
// x86-64 kernels (OpenBLAS 0.3.21 on a Sapphire Rapids Xeon: "Prescott", SSE3), several times
// slower than the "SkylakeX" kernels the CPU can run.
void reexec_with_library_settings(char** argv) {
  std::vector<const char*> changed;
  if (std::getenv(kWaitPolicy) == nullptr && std::getenv(kSpinCount) == nullptr &&
      setenv(kSpinCount, kShortSpin, 1) == 0) {
    changed.push_back(kSpinCount);
  }
  if (std::getenv(kBlasCore) == nullptr) {
    if (const std::optional<std::string> core = recommended_blas_core();
        core && setenv(kBlasCore, core->c_str(), 1) == 0) {
      changed.push_back(kBlasCore);
    }
  }
  if (changed.empty()) return;
  execv("/proc/self/exe", argv);
  // Still here: no /proc (or exec refused). Run on with the libraries' defaults; the profile
  // header says which settings were in force.
  for (const char* name : changed) unsetenv(name);
}

// The OpenMP runtime arrives with oneDNN's library, not with this program's objects, so it is
// looked up at run time: whichever compiler built the program, no second runtime is pulled in.
std::string openmp_description() {
  using MaxThreads = int (*)();
  auto* max_threads = reinterpret_cast<MaxThreads>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  if (max_threads == nullptr) return "";
  const char* policy = std::getenv(kWaitPolicy);
  const char* spin = std::getenv(kSpinCount);
  if (policy != nullptr) return fmt::format("{} threads, wait policy {}", max_threads(), policy);
  if (spin != nullptr) {
    return fmt::format("{} threads, wait policy spin {} then sleep", max_threads(), spin);
  }
  return fmt::format("{} threads, wait policy default (spin, then sleep)", max_threads());
}

void set_openmp_threads(int threads) {
  using SetThreads = void (*)(int);
  auto* set_threads = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (set_threads != nullptr) set_threads(threads);
}

}  // namespace tscope::cli
