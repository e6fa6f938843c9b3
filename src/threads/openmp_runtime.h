// SPDX-License-Identifier: Apache-2.0
#pragma once
// The OpenMP runtime that oneDNN's library links (libgomp: the build links the same library,
// cmake/tscope_dependencies.cmake), called directly. Declared here rather than through <omp.h>:
// clang ships its own <omp.h> only with its own runtime, which must not be the one linked. The
// omp_* functions are OpenMP's standard C API; GOMP_parallel is libgomp's entry point for
// `#pragma omp parallel` (its ABI since GCC 4.9), which lets this code start a team without being
// compiled with OpenMP support.
extern "C" {
int omp_get_max_threads();
void omp_set_num_threads(int threads);
int omp_in_parallel();
int omp_get_thread_num();
int omp_get_num_threads();
void GOMP_parallel(void (*fn)(void*), void* data, unsigned threads, unsigned flags);
}
