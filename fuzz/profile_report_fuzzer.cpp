// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for `tscope report`: the profile JSON reader and the text renderer over what
// it returns. Any byte string must render or raise a tscope::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tscope/core/error.h"
#include "tscope/profile/json_export.h"
#include "tscope/profile/report_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    tscope::profile::ProfileDocument document = tscope::profile::parse_profile_json(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
    tscope::profile::TextReportOptions report = document.report;
    // The three ways `tscope report` renders: one profile, several as saved, and a merge of
    // files; the merge with every node's signatures (--by-signature).
    if (document.profiles.size() == 1) {
      (void)tscope::profile::render_text(document.profiles[0], report);
    } else {
      (void)tscope::profile::render_profiles(document.profiles, report);
    }
    report.show_signatures = true;
    (void)tscope::profile::render_text(
        tscope::profile::sum_profiles(document.profiles, "Merge of fuzz.json"), report);
  } catch (const tscope::Error&) {
    // The documented outcome for bad input.
  }
  return 0;
}
