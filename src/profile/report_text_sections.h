// SPDX-License-Identifier: Apache-2.0
#pragma once
// Sections of the text report shared by a function's report and its loops' (report_loops.cpp).
#include <string>

#include "tscope/profile/profile.h"
#include "tscope/profile/report_text.h"

namespace tscope::profile::detail {

/// The Class, Ops and Apply tables, the by-signature table and, with show_memory, the memory
/// section of `profile`'s functions.
void render_node_sections(const Profile& profile,
                          const TextReportOptions& options,
                          std::string& out);

/// One "Scan Op profiling" section per loop of `profile`'s functions, each followed by the
/// sections of the loops inside its body, numbered by nesting ([1], [1.1], ...). Empty text
/// when no function has a loop.
[[nodiscard]] std::string render_loop_sections(const Profile& profile,
                                               const TextReportOptions& options);

}  // namespace tscope::profile::detail
