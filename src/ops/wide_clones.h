// SPDX-License-Identifier: Apache-2.0
#pragma once
// TSCOPE_WIDE_CLONES marks a hot loop that g++ should also compile for AVX2 and AVX-512: the
// build targets any x86-64, whose vectors hold four floats, and the clone the CPU can run widest
// is picked once, when the library loads. Not under ThreadSanitizer: the clones' resolver runs
// while the program is relocated, before the sanitizer's runtime is up, and its instrumented entry
// crashes the program at start. Other compilers and CPUs get the plain function.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define TSCOPE_WIDE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TSCOPE_WIDE_CLONES
#endif
