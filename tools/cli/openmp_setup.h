// SPDX-License-Identifier: Apache-2.0
// The OpenMP runtime that runs the oneDNN kernels: the CLI bounds how long its idle threads spin
// before they sleep, and describes the setting for the profile header.
#pragma once

#include <string>

namespace tscope::cli {

/// When neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set, sets GOMP_SPINCOUNT to a short spin
/// and re-executes the program so that the OpenMP runtime, which reads the variables only when
/// it loads, sees it. Returns normally when either was already set (an explicit choice wins) or
/// when re-execution is impossible.
void reexec_with_short_openmp_spin(char** argv);

/// "2 threads, wait policy passive": the settings oneDNN's parallel regions run under; empty when
/// no OpenMP runtime is loaded.
[[nodiscard]] std::string openmp_description();

/// Sets the threads of oneDNN's parallel regions (omp_set_num_threads of the loaded runtime; no
/// effect when none is loaded).
void set_openmp_threads(int threads);

}  // namespace tscope::cli
