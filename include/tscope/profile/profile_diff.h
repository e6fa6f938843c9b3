// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Comparison of two profiles (`tscope diff BEFORE.json AFTER.json`): functions, Class, Ops and
/// Apply rows matched by name, rows that appeared or vanished, kernel implementation changes,
/// memory peaks, and the decision of the slowdown gate. A row is slower when both its mean time
/// per call and its fastest call grew past the threshold; the mean alone is noise (warm-up calls,
/// spikes). Plain data; report_diff.h renders it.
///
///   const ProfileDiff diff = diff_profiles(before, after, {.slower_percent = 10});
///   if (diff.gate_failed) ...
#include <cstdint>
#include <string>
#include <vector>

#include "tscope/profile/profile.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

/// Default of DiffOptions::slower_percent and of `tscope diff --fail-if-slower` without a value.
inline constexpr double kDefaultSlowerPercent = 10.0;
/// Default of DiffOptions::min_share_percent (`--min-share`).
inline constexpr double kDefaultMinSharePercent = 1.0;

struct DiffOptions {
  /// A row or the total is "slower" when its mean time per call, and its fastest call where both
  /// profiles hold a distribution, grew by more than this (the fastest call also by more than
  /// half the row's spread before: DiffRow::fastest_limit).
  double slower_percent = kDefaultSlowerPercent;
  /// Rows below this share (in both profiles) never count as slower: their share of the steady
  /// node time (DiffMeasure::steady_share_percent) where both profiles hold a distribution, else
  /// of the total node time.
  double min_share_percent = kDefaultMinSharePercent;
};

/// Time of one row (a function, class, op or node, or the total) in one profile.
struct DiffMeasure {
  bool present = false;  ///< the row exists in this profile
  std::int64_t call_count = 0;
  std::int64_t total_ns = 0;
  /// The time had every call run as fast (slow) as that node's fastest (slowest) call: the sum
  /// of min_ns (max_ns) x call_count over the row's nodes. Meaningful only with a distribution.
  std::int64_t fastest_ns = 0;
  std::int64_t slowest_ns = 0;
  /// The row's time and calls without each node's slowest call (the cold first call, as a rule):
  /// their ratio is the mean of a warm call. Nodes of one call add nothing.
  std::int64_t warm_ns = 0;
  std::int64_t warm_call_count = 0;
  bool has_distribution = false;  ///< every node of the row has calls and min_ns <= max_ns
  std::string impl;               ///< distinct kernel implementations, first seen first: "blas,cpu"
  double share_percent = 0;       ///< of the profile's total node time
  /// fastest_ns as a share of the profile's steady node time (every node's fastest_ns summed):
  /// what the row costs when no call is cold or disturbed, so that a spike in a small row does
  /// not lift it over DiffOptions::min_share_percent. Negative without a distribution.
  double steady_share_percent = -1;

  /// total_ns / call_count; 0 without calls.
  [[nodiscard]] double ns_per_call() const;
  /// fastest_ns / call_count: the fastest call of a one-node row; for a row of several nodes the
  /// nodes' fastest calls averaged over their calls; for the total, the node time of one Function
  /// call had every node run its fastest call. 0 without calls.
  [[nodiscard]] double fastest_ns_per_call() const;
  /// warm_ns / warm_call_count; 0 without warm calls.
  [[nodiscard]] double warm_ns_per_call() const;
};

struct DiffRow {
  std::string name;  ///< class, op, node or function name as the report prints it
  /// Apply rows: the model node or user op the node came from ("onnx:Conv_3", "relu"); empty
  /// otherwise. Part of the match key.
  std::string provenance;
  std::string function;  ///< Apply rows: the function holding the node
  DiffMeasure before;
  DiffMeasure after;
  std::int64_t change_ns = 0;  ///< after.total_ns - before.total_ns
  /// after.ns_per_call() / before.ns_per_call(); negative when either side has no calls or no
  /// time (appeared and vanished rows).
  double ratio = -1;
  /// after.fastest_ns_per_call() / before.fastest_ns_per_call(); negative unless both sides
  /// carry a distribution and the fastest call before took some time.
  double fastest_ratio = -1;
  /// The fastest_ratio above which the fastest call counts as grown: 1 + slower_percent / 100, or
  /// 1 + half the spread before (warm mean / fastest call - 1) where that is wider. Negative
  /// without distributions.
  double fastest_limit = -1;
  /// Both sides carry a distribution and the mean time per call grew by more than
  /// DiffOptions::slower_percent, but the fastest call did not grow past fastest_limit: the
  /// slowdown lies in some calls (a cold first call, a spike) or inside the row's own spread.
  bool noise = false;
  bool impl_changed = false;  ///< both present and their impl strings differ
  /// The mean time per call grew by more than DiffOptions::slower_percent, the fastest call past
  /// fastest_limit where both sides carry a distribution, and the row holds at least
  /// min_share_percent of the steady node time (of the total without distributions) in either
  /// profile.
  bool slower = false;
};

/// Rows of one kind (Class, Ops or Apply).
struct DiffTable {
  std::vector<DiffRow> matched;   ///< in both profiles, largest |change_ns| first
  std::vector<DiffRow> appeared;  ///< only after (a rewrite added them), largest time first
  std::vector<DiffRow> vanished;  ///< only before (a rewrite removed them), largest time first
};

/// One memory peak, in bytes; a side holds -1 when its profile did not record it.
struct DiffPeak {
  std::string name;  ///< "simulated (executed order)", "measured (allocator)", ...
  std::int64_t before_bytes = -1;
  std::int64_t after_bytes = -1;
};

struct ProfileDiff {
  std::string before_source;  ///< file names (or any label) the caller gave
  std::string after_source;
  DiffOptions options;
  std::vector<DiffRow> functions;  ///< whole Function calls, matched by function name, in
                                   ///< the before profile's order
  /// Functions only in after (only in before), in that profile's order. Everything else (the
  /// total, the tables, the memory peaks) covers only the functions both profiles hold.
  std::vector<DiffRow> functions_appeared;
  std::vector<DiffRow> functions_vanished;
  /// All node time of the functions in both profiles ("Time in thunks"); its calls are their
  /// Function calls, so its time per call is the node time of one call.
  DiffRow total;
  DiffTable classes;
  DiffTable ops;
  DiffTable nodes;
  std::vector<DiffPeak> peaks;
  bool gate_failed = false;  ///< total.slower, or any matched Class, Ops or Apply row slower
};

/// Compares `before` with `after`. Functions are matched by name (several functions of one name
/// are summed; one in a single profile is listed as appeared or vanished and left out of the
/// rest); Class rows by class name, Ops rows by op name, Apply rows by function, printed node
/// name and provenance (the k-th node of a key matches the k-th). Throws Error(InvalidArgument)
/// naming the source when a profile holds no function; Error(Parse) naming the node or function
/// when its times overflow a 64-bit sum (a malformed file).
[[nodiscard]] ProfileDiff diff_profiles(const Profile& before,
                                        const Profile& after,
                                        const DiffOptions& options = {},
                                        const std::string& before_source = "before",
                                        const std::string& after_source = "after");

}  // namespace tscope::profile

#pragma GCC visibility pop
