// SPDX-License-Identifier: Apache-2.0
// Compiled into every fuzz target, so that the limits hold however the binary is started (CI,
// a campaign, or by hand on a saved input).
//
// The allocation cap (kMaxAllocationBytes in fuzz_limits.h): a malloc above 256 MiB returns null,
// as on a machine out of memory, instead of succeeding slowly. The library must turn that into a
// tscope::Error, so a fuzzed shape asking for terabytes of tensor is a clean outcome. ASan's
// operator new aborts on such a request rather than throwing std::bad_alloc: a std::vector sized
// from untrusted extents without a check is a finding.
extern "C" const char* __asan_default_options() {  // NOLINT(readability-identifier-naming)
  return "allocator_may_return_null=1:max_allocation_size_mb=256";
}
