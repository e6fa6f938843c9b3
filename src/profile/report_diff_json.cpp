// SPDX-License-Identifier: Apache-2.0
// The comparison of two profiles as JSON, for tools: every row of the diff, field names as in
// profile_diff.h.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Warray-bounds"  // see json_export.cpp (nlohmann/json#4819)
#endif
#include "tscope/profile/report_diff.h"

#define JSON_DIAGNOSTICS 1  // as json_export.cpp, so both files use one nlohmann ABI
#include <nlohmann/json.hpp>

namespace tscope::profile {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DiffOptions, slower_percent, min_share_percent)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DiffMeasure,
                                   present,
                                   call_count,
                                   total_ns,
                                   fastest_ns,
                                   slowest_ns,
                                   warm_ns,
                                   warm_call_count,
                                   has_distribution,
                                   impl,
                                   share_percent,
                                   steady_share_percent)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DiffRow,
                                   name,
                                   provenance,
                                   function,
                                   before,
                                   after,
                                   change_ns,
                                   ratio,
                                   fastest_ratio,
                                   fastest_limit,
                                   noise,
                                   impl_changed,
                                   slower)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DiffTable, matched, appeared, vanished)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DiffPeak, name, before_bytes, after_bytes)

std::string render_diff_json(const ProfileDiff& diff) {
  nlohmann::json document;
  document["format"] = "tscope-profile-diff";
  document["schema_version"] = 1;
  document["before_source"] = diff.before_source;
  document["after_source"] = diff.after_source;
  document["options"] = diff.options;
  document["gate_failed"] = diff.gate_failed;
  document["total"] = diff.total;
  document["functions"] = diff.functions;
  document["functions_appeared"] = diff.functions_appeared;
  document["functions_vanished"] = diff.functions_vanished;
  document["classes"] = diff.classes;
  document["ops"] = diff.ops;
  document["nodes"] = diff.nodes;
  document["peaks"] = diff.peaks;
  return document.dump(2) + "\n";
}

}  // namespace tscope::profile
