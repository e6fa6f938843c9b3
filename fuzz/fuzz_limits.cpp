// SPDX-License-Identifier: Apache-2.0
// Compiled into every fuzz target, so that the limits hold however the binary is started (CI,
// a campaign, or by hand on a saved input).
//
// The allocation cap (kMaxAllocationBytes in fuzz_limits.h): a request above 256 MiB fails as it would on a machine out of memory
// (malloc returns null, operator new throws std::bad_alloc) instead of succeeding slowly or
// aborting the process. The library must turn that failure into a tscope::Error; a fuzzed shape
// asking for terabytes is then a clean outcome, while a std::bad_alloc that escapes is a finding.
extern "C" const char* __asan_default_options() {  // NOLINT(readability-identifier-naming)
  return "allocator_may_return_null=1:max_allocation_size_mb=256";
}
