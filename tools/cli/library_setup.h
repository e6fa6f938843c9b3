// SPDX-License-Identifier: Apache-2.0
// Settings of the libraries under the kernels that they read only when they load: the CLI bounds
// how long the idle worker threads (tscope/threads/thread_count.h) spin before they sleep, and
// points OpenBLAS at the right kernels where its own CPU detection fails.
#pragma once

#include <string>

namespace tscope::cli {

/// Sets GOMP_SPINCOUNT to a short spin when neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set,
/// and OPENBLAS_CORETYPE to recommended_blas_core() when it is unset and OpenBLAS detected the CPU
/// wrongly, then re-executes the program so that the libraries, which read the variables only
/// when they load, see them. Returns normally when nothing was to change (an explicit choice
/// wins) or when re-execution is impossible.
void reexec_with_library_settings(char** argv);

}  // namespace tscope::cli
