// SPDX-License-Identifier: Apache-2.0
// Settings of the libraries under the kernels that they read only when they load: the CLI bounds
// how long the idle threads of the OpenMP runtime (oneDNN's) spin before they sleep, and points
// OpenBLAS at the right kernels where its own CPU detection fails; it describes the OpenMP
// setting for the profile header (OpenBLAS's core is in the BLAS line).
#pragma once

#include <string>

namespace tscope::cli {

/// Sets GOMP_SPINCOUNT to a short spin when neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set,
/// and OPENBLAS_CORETYPE to recommended_blas_core() when it is unset and OpenBLAS detected the CPU
/// wrongly, then re-executes the program so that the libraries, which read the variables only
/// when they load, see them. Returns normally when nothing was to change (an explicit choice
/// wins) or when re-execution is impossible.
void reexec_with_library_settings(char** argv);

/// "2 threads, wait policy passive": the settings oneDNN's parallel regions run under; empty when
/// no OpenMP runtime is loaded.
[[nodiscard]] std::string openmp_description();

/// Sets the threads of oneDNN's parallel regions (omp_set_num_threads of the loaded runtime; no
/// effect when none is loaded).
void set_openmp_threads(int threads);

}  // namespace tscope::cli
