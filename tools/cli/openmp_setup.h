// SPDX-License-Identifier: Apache-2.0
// The OpenMP runtime that runs the oneDNN kernels: the CLI makes its idle threads sleep instead of
// spin, and describes the setting for the profile header.
#pragma once

#include <string>

namespace tscope::cli {

/// When OMP_WAIT_POLICY is unset, sets it to "passive" and re-executes the program so that the
/// OpenMP runtime, which reads the variable only when it loads, sees it. Returns normally when the
/// variable was already set (an explicit choice wins) or when re-execution is impossible.
void reexec_with_passive_openmp_wait(char** argv);

/// "2 threads, wait policy passive": the settings oneDNN's parallel regions run under; empty when
/// no OpenMP runtime is loaded.
[[nodiscard]] std::string openmp_description();

/// Sets the threads of oneDNN's parallel regions (omp_set_num_threads of the loaded runtime; no
/// effect when none is loaded).
void set_openmp_threads(int threads);

}  // namespace tscope::cli
