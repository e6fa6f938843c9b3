// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the TSCOPE_FLAGS parser: any string must give options or raise a
// tscope::Error; options it accepts must lie in the ranges the parser documents.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tscope/core/error.h"
#include "tscope/profile/profile_options.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const tscope::profile::ProfileOptions options =
        tscope::profile::parse_flags(std::string_view(reinterpret_cast<const char*>(data), size));
    // The report code divides by and allocates from these; the parser is their only check.
    if (options.n_apply < 1 || options.n_ops < 1 || options.output_line_width < 1 ||
        options.min_memory_size < 0 || options.destination.empty()) {
      std::abort();
    }
  } catch (const tscope::Error&) {
    // The documented outcome for bad input.
  }
  return 0;
}
