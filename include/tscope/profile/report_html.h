// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The HTML report (`tscope report --html OUT.html`, `profiling.html=PATH`): one self-contained
/// page (html_page.h) with the function summary, time by class and by op as bar charts with the
/// kernel implementation, the Apply table (sortable, filterable), the memory section with the
/// live bytes over one call of each function, the tips, and a flame graph of host zones and graph
/// nodes (report_folded.h). A pure function of the Profile; every name from it is escaped.
///
///   write_file_atomically("profile.html", render_html(profile, {.source = "profile.json"}));
#include <string>

#include "tscope/profile/profile.h"

namespace tscope::profile {

struct HtmlReportOptions {
  std::string source;       ///< where the profile came from, shown under the title; may be empty
  int n_chart_rows = 20;    ///< bars in the Class and Ops charts (the rest summed in one bar)
  int n_memory_charts = 8;  ///< functions given a live-bytes chart, costliest first
};

/// The whole page. Sections are independent functions of the profile (report_html.cpp), so a
/// further view, such as a timeline read from a Chrome trace, is one more section and one more
/// input in HtmlReportOptions.
[[nodiscard]] std::string render_html(const Profile& profile,
                                      const HtmlReportOptions& options = {});

}  // namespace tscope::profile
