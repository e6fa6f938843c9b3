// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The text report, in the layout of Theano's ProfileStats.summary: Function, Globals, Class, Ops
/// and Apply sections. A pure function of the Profile.
#include <string>

#include "tscope/profile/profile.h"

namespace tscope::profile {

struct TextReportOptions {
  int n_ops = 20;        ///< rows in the Class and Ops tables
  int n_apply = 20;      ///< rows in the Apply table
  int line_width = 512;  ///< drives truncation of the name column
  bool show_io = false;  ///< per-apply input/output lines (profile_memory)
  bool show_distribution = false;  ///< min / max columns in the Apply table
};

[[nodiscard]] std::string render_text(const Profile& profile, const TextReportOptions& options = {});

}  // namespace tscope::profile
