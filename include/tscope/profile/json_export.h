// SPDX-License-Identifier: Apache-2.0
#pragma once
/// JSON export of profiles: the whole model plus the report options, so `tscope report` renders
/// the text byte for byte. Schema: docs/profiler_formats.md ("format": "tscope-profile",
/// "schema_version": kProfileSchemaVersion).
#include <string>
#include <string_view>
#include <vector>

#include "tscope/profile/profile.h"
#include "tscope/profile/report_text.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

struct ProfileDocument {
  std::vector<Profile> profiles;
  TextReportOptions report;  ///< the options the writer rendered its text with
};

/// Serialises `profiles` (pretty-printed, two-space indent, trailing newline).
[[nodiscard]] std::string to_json_text(const std::vector<Profile>& profiles,
                                       const TextReportOptions& report);

/// Parses a document written by to_json_text. Throws Error(Parse) naming `source` (and the field,
/// for a value of the wrong type) when the text is not JSON, not a tscope profile, of another
/// schema version, or does not follow the schema.
[[nodiscard]] ProfileDocument parse_profile_json(std::string_view text, std::string_view source);

}  // namespace tscope::profile

#pragma GCC visibility pop
