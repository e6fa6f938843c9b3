// SPDX-License-Identifier: Apache-2.0
#pragma once
// Sections of the HTML report drawn as charts (report_html_charts.cpp, report_html_timeline.cpp);
// report_html.cpp puts the page together.
#include <string>
#include <vector>

#include "tscope/profile/profile.h"
#include "tscope/profile/report_folded.h"
#include "tscope/profile/trace.h"

namespace tscope::profile::detail {

/// A section of the page: its anchor, heading and HTML; charts counts its `svg.chart` elements.
struct HtmlSection {
  std::string id;
  std::string heading;
  std::string html;
  int charts = 0;
};

/// Peaks per function and, for up to `max_charts` functions (costliest first), the simulated live
/// bytes over one call in executed order with the simulated and measured peaks marked.
[[nodiscard]] HtmlSection html_memory_section(const Profile& profile, int max_charts);

/// An icicle (root at the top) of the stacks: width is time, a frame's children below it.
/// `has_zones`: the stacks start with host zones (the note above the chart says so).
[[nodiscard]] HtmlSection html_flame_graph_section(const std::vector<FoldedStack>& stacks,
                                                   bool has_zones);

/// The most recent stretch of a recorded timeline holding about `max_slices` slices: one lane per
/// thread track, nested slices stacked, the live bytes below, every slice's details as tooltip.
[[nodiscard]] HtmlSection html_timeline_section(const TraceRecord& trace, int max_slices);

}  // namespace tscope::profile::detail
