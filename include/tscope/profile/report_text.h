// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The text report, in the layout of Theano's ProfileStats.summary: Function, Globals, Class, Ops,
/// Apply, Apply by input signature, Memory, Optimizer and Tips sections, then Host zones in
/// cProfile's layout (a profile holding zones only prints that section alone). A pure function
/// of the Profile, so a profile read back from JSON renders byte for byte as the live one.
#include <cstdint>
#include <string>
#include <vector>

#include "tscope/profile/profile.h"
#include "tscope/profile/profile_options.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

struct TextReportOptions {
  int n_ops = 20;                       ///< rows in the Class and Ops tables
  int n_apply = 20;                     ///< rows in the Apply table and the memory list
  int line_width = 512;                 ///< drives truncation of the name column
  bool show_io = false;                 ///< per-apply input/output lines (profile_memory)
  bool show_distribution = false;       ///< min / max columns in the Apply table
  bool show_memory = false;             ///< the Memory Profile section (profile_memory)
  std::int64_t min_memory_size = 1024;  ///< memory list cut-off in bytes
  bool show_tips = true;
  bool show_optimizer = false;  ///< the Optimizer Profile section (profile_optimizer)
  /// Time per input signature for every node (`--by-signature`); otherwise only for nodes called
  /// with several signatures.
  bool show_signatures = false;
  int n_zones = 20;                    ///< rows in the Host zones table
  bool sort_zones_by_cumtime = false;  ///< sort the Host zones table by cumtime, not tottime
  int n_zone_callers = 5;              ///< top zones whose callers and callees are listed
  /// The Input pipeline section at the top when the host record has steps or data sources
  /// (render_profiles prints it once, at the top of all profiles).
  bool show_input_section = true;
};

/// The report options the flags ask for (io lines and memory section with profile_memory).
[[nodiscard]] TextReportOptions report_options(const ProfileOptions& options);

[[nodiscard]] std::string render_text(const Profile& profile,
                                      const TextReportOptions& options = {});

/// The "Optimizer Profile" section: time and applications of each rewrite, summed over the
/// profile's functions.
[[nodiscard]] std::string render_optimizer_section(const Profile& profile);

/// The "Apply by input signature" section: per node, the calls and time of each distinct input
/// signature. `all_nodes` false lists only nodes called with several (empty text when none).
[[nodiscard]] std::string render_signature_section(const Profile& profile,
                                                   const TextReportOptions& options,
                                                   bool all_nodes);

/// The "Host zones" section (zones.h), in cProfile's layout: per-zone totals merged over threads,
/// cut at n_zones rows, callers and callees of the top rows, per-thread totals and zone values.
/// Empty text when the profile holds no zones.
[[nodiscard]] std::string render_zone_section(const HostRecord& host,
                                              const TextReportOptions& options);

/// Several profiles as printed at exit: each in turn, then, when there are several, their sum.
[[nodiscard]] std::string render_profiles(const std::vector<Profile>& profiles,
                                          const TextReportOptions& options);

}  // namespace tscope::profile

#pragma GCC visibility pop
