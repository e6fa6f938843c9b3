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

/// "name (file:line)" of a zone site, "name (graph function)" for a Function call, and
/// "<outside any zone>" for -1.
[[nodiscard]] std::string site_label(const HostRecord& host, std::int64_t site);

/// The "Input pipeline" section (input_verdict.h) that opens a report whose host record has
/// steps or data sources; empty text otherwise.
[[nodiscard]] std::string render_input_section(const HostRecord& host);

/// The "Epochs" section: one row per marked epoch, first epoch against the rest, and the
/// distribution of step times; empty text when no step was marked.
[[nodiscard]] std::string render_epoch_section(const HostRecord& host);

}  // namespace tscope::profile::detail
