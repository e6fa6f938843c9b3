// SPDX-License-Identifier: Apache-2.0
#include "library_setup.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "tscope/ops/linalg.h"
#include "tscope/threads/thread_count.h"

namespace tscope::cli {

namespace {
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
  if (std::getenv(threads::kWaitPolicyVariable) == nullptr &&
      std::getenv(threads::kSpinCountVariable) == nullptr &&
      setenv(threads::kSpinCountVariable, kShortSpin, 1) == 0) {
    changed.push_back(threads::kSpinCountVariable);
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

}  // namespace tscope::cli
