// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The HTML report (`tscope report --html OUT.html`, `profiling.html=PATH`): one self-contained
/// page (html_page.h) with the function summary, time by class and by op as bar charts with the
/// kernel implementation, the Apply table (sortable, filterable), the memory section with the
/// live bytes over one call of each function, the tips, and a flame graph of host zones and graph
/// nodes (report_folded.h), and, when a timeline was recorded, its latest stretch. A pure function
/// of the Profile (and the trace); every name from them is escaped.
///
///   write_file_atomically("profile.html", render_html(profile, {.source = "profile.json"}));
#include <string>

#include "tscope/profile/profile.h"
#include "tscope/profile/trace.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

struct HtmlReportOptions {
  std::string source;       ///< where the profile came from, shown under the title; may be empty
  int n_chart_rows = 20;    ///< bars in the Class and Ops charts (the rest summed in one bar)
  int n_memory_charts = 8;  ///< functions given a live-bytes chart, costliest first
  /// A timeline recorded with the profile (trace.h): drawn as the Timeline section when set.
  const TraceRecord* trace = nullptr;
  int n_timeline_slices = 4000;  ///< the latest slices the Timeline section draws
};

/// The whole page. Sections are independent functions of the profile and the trace
/// (report_html.cpp).
[[nodiscard]] std::string render_html(const Profile& profile,
                                      const HtmlReportOptions& options = {});

}  // namespace tscope::profile

#pragma GCC visibility pop
