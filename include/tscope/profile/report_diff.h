// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Renderers of a ProfileDiff (profile_diff.h): the text comparison in the report's Theano-like
/// column style, HTML for a browser, and JSON for tools. Pure functions of the diff.
#include <string>

#include "tscope/profile/profile_diff.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

struct DiffReportOptions {
  int n_rows = 20;  ///< rows in each Class, Ops and Apply table and each appeared/vanished list
};

/// Sections: header and gate settings, Function, Memory peaks, Class, Ops, Apply (each with the
/// rows that appeared and vanished), and the gate's verdict.
[[nodiscard]] std::string render_diff_text(const ProfileDiff& diff,
                                           const DiffReportOptions& options = {});

/// The comparison as one self-contained HTML page (html_page.h): the same sections as the text,
/// every row in sortable tables, and a chart of the largest changes per table (n_rows bars).
[[nodiscard]] std::string render_diff_html(const ProfileDiff& diff,
                                           const DiffReportOptions& options = {});

/// The whole diff as JSON ("format": "tscope-profile-diff"; docs/profiler_formats.md), every row.
[[nodiscard]] std::string render_diff_json(const ProfileDiff& diff);

}  // namespace tscope::profile

#pragma GCC visibility pop
