// SPDX-License-Identifier: Apache-2.0
// Comparison of two profiles: rows matched by name, the fastest-call rule and the slowdown gate.
#include "tscope/profile/profile_diff.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>

#include "tscope/core/checked_math.h"
#include "tscope/core/error.h"
#include "tscope/profile/memory_model.h"

namespace tscope::profile {
namespace {

void add_impl(DiffMeasure& measure, const std::string& impl) {
  if (impl.empty()) return;
  if (("," + measure.impl + ",").find("," + impl + ",") != std::string::npos) return;
  measure.impl += (measure.impl.empty() ? "" : ",") + impl;
}

bool node_has_distribution(const NodeRecord& node) {
  return node.call_count > 0 && node.max_ns > 0 && node.min_ns <= node.max_ns;
}

// Adds a node's time and its every-call-at-min/max times. The files are user input: a sum that
// overflows is a Parse error naming the node, never a wrapped value.
void add_times(DiffMeasure& measure, const NodeRecord& node) {
  const std::string what = "diff: node '" + node.apply_name + "'";
  const auto add = [&](std::int64_t a, std::int64_t b) {
    return checked_add(a, b, what, ErrorKind::Parse);
  };
  const auto times_calls = [&](std::int64_t ns) {
    return checked_mul(ns, node.call_count, what, ErrorKind::Parse);
  };
  measure.total_ns = add(measure.total_ns, node.total_ns);
  measure.fastest_ns = add(measure.fastest_ns, times_calls(node.min_ns));
  measure.slowest_ns = add(measure.slowest_ns, times_calls(node.max_ns));
  // Warm: without the slowest call of each run merged into the node (of its one run: max_ns).
  const std::int64_t slowest_ns = node.run_count > 0 ? node.run_slowest_ns : node.max_ns;
  const std::int64_t slowest_calls = node.run_count > 0 ? node.run_count : 1;
  if (node.call_count > slowest_calls && slowest_ns <= node.total_ns) {
    measure.warm_ns = add(measure.warm_ns, node.total_ns - slowest_ns);
    measure.warm_call_count = add(measure.warm_call_count, node.call_count - slowest_calls);
  }
}

// Adds one node to a row; a row keeps a distribution only while every node has one.
void add_node(DiffMeasure& measure, const NodeRecord& node) {
  const bool first = !measure.present;
  measure.present = true;
  measure.call_count = checked_add(measure.call_count, node.call_count,
                                   "diff: node '" + node.apply_name + "'", ErrorKind::Parse);
  add_times(measure, node);
  measure.has_distribution = (first || measure.has_distribution) && node_has_distribution(node);
  add_impl(measure, node.impl);
}

double share_of(std::int64_t part_ns, std::int64_t total_ns) {
  return total_ns > 0 ? 100.0 * static_cast<double>(part_ns) / static_cast<double>(total_ns) : 0;
}

// The gate's rule (docs/profiler_formats.md, "Noise"). The mean time per call carries the cold
// first call (oneDNN primitive creation, weight packing: often 10-100x a steady call) and any
// spike, so it moves between two runs of one job; the fastest call moves much less. A row is
// slower when both grew past the threshold; when only the mean did, the slowdown lies in some
// calls and the row is noise. The fastest call must also grow by more than half the row's spread
// before (its warm mean over its fastest call): a kernel whose calls scatter widely (a memory-
// bound one on a shared machine) also scatters its fastest call from one process to the next,
// where a steady kernel's stays put. Without a distribution on both sides only the mean is known.
double fastest_limit(const DiffMeasure& before, double factor) {
  const double fastest = before.fastest_ns_per_call();
  const double warm = before.warm_ns_per_call();
  if (fastest <= 0 || warm <= fastest) return factor;
  return std::max(factor, 1.0 + 0.5 * (warm / fastest - 1.0));
}

void compare(DiffRow& row, const DiffOptions& options) {
  row.change_ns = row.after.total_ns - row.before.total_ns;
  const bool both = row.before.present && row.after.present;
  const double before_per_call = row.before.ns_per_call();
  const double after_per_call = row.after.ns_per_call();
  row.ratio = both && before_per_call > 0 && row.after.call_count > 0
                  ? after_per_call / before_per_call
                  : -1;
  row.impl_changed = both && row.before.impl != row.after.impl;
  const bool distributions = both && row.before.has_distribution && row.after.has_distribution &&
                             row.before.call_count > 0 && row.after.call_count > 0;
  const double before_fastest = row.before.fastest_ns_per_call();
  const double after_fastest = row.after.fastest_ns_per_call();
  row.fastest_ratio = distributions && before_fastest > 0 ? after_fastest / before_fastest : -1;
  const double factor = 1.0 + options.slower_percent / 100.0;
  row.fastest_limit = distributions ? fastest_limit(row.before, factor) : -1;
  const bool mean_grew = row.ratio > factor;
  const bool fastest_grew = !distributions || after_fastest > before_fastest * row.fastest_limit;
  row.noise = distributions && mean_grew && !fastest_grew;
  // The share that admits a row to the gate is its steady one where both sides can tell it: a
  // row of a fraction of a percent whose calls hit a spike would otherwise count by its spike.
  const double share =
      distributions ? std::max(row.before.steady_share_percent, row.after.steady_share_percent)
                    : std::max(row.before.share_percent, row.after.share_percent);
  row.slower = mean_grew && fastest_grew && share >= options.min_share_percent;
}

// All node time, per Function call. Its fastest time is every node's calls each at that node's
// fastest call (the sum of min_ns x calls), so the total follows the same rule as its rows.
DiffMeasure total_measure(const Profile& profile) {
  DiffMeasure measure;
  measure.present = true;
  measure.has_distribution = true;
  for (const FunctionRecord& function : profile.functions) {
    measure.call_count = checked_add(measure.call_count, function.call_count,
                                     "diff: function '" + function.name + "'", ErrorKind::Parse);
    for (const NodeRecord& node : function.nodes) {
      add_times(measure, node);
      if (node.call_count > 0 && !node_has_distribution(node)) measure.has_distribution = false;
    }
  }
  measure.share_percent = measure.total_ns > 0 ? 100.0 : 0;
  if (measure.has_distribution) measure.steady_share_percent = measure.fastest_ns > 0 ? 100.0 : 0;
  return measure;
}

struct Keyed {
  std::string key;
  DiffRow row;
};

// How a table keys its rows and names them.
struct RowKind {
  std::string (*key_of)(const FunctionRecord&, const NodeRecord&);
  void (*name_row)(DiffRow&, const FunctionRecord&, const NodeRecord&);
  /// Apply rows: nodes with the same key stay apart and match by occurrence (the k-th with k-th).
  bool one_row_per_node = false;
};

// Rows of one profile, first seen first, with `after` or `before` filled; `total` is the
// profile's total_measure, which the shares divide by.
std::vector<Keyed> collect_rows(const Profile& profile,
                                const DiffMeasure& total,
                                bool after,
                                const RowKind& kind) {
  std::vector<Keyed> rows;
  std::map<std::string, std::size_t> index;
  std::map<std::string, int> occurrences;
  for (const FunctionRecord& function : profile.functions) {
    for (const NodeRecord& node : function.nodes) {
      std::string key = kind.key_of(function, node);
      if (kind.one_row_per_node) key += '\n' + std::to_string(occurrences[key]++);
      auto [it, inserted] = index.try_emplace(key, rows.size());
      if (inserted) {
        rows.push_back({key, {}});
        kind.name_row(rows.back().row, function, node);
      }
      DiffRow& row = rows[it->second].row;
      add_node(after ? row.after : row.before, node);
    }
  }
  for (Keyed& keyed : rows) {
    DiffMeasure& measure = after ? keyed.row.after : keyed.row.before;
    measure.share_percent = share_of(measure.total_ns, total.total_ns);
    if (measure.has_distribution && total.has_distribution) {
      measure.steady_share_percent = share_of(measure.fastest_ns, total.fastest_ns);
    }
  }
  return rows;
}

bool larger_change_first(const DiffRow& a, const DiffRow& b) {
  const std::int64_t a_change = std::llabs(a.change_ns);
  const std::int64_t b_change = std::llabs(b.change_ns);
  if (a_change != b_change) return a_change > b_change;
  return a.name < b.name;
}

DiffTable diff_table(const Profile& before,
                     const Profile& after,
                     const DiffRow& total,
                     const DiffOptions& options,
                     const RowKind& kind) {
  std::vector<Keyed> rows = collect_rows(before, total.before, false, kind);
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < rows.size(); ++i) index.emplace(rows[i].key, i);
  for (Keyed& keyed : collect_rows(after, total.after, true, kind)) {
    auto it = index.find(keyed.key);
    if (it == index.end()) {
      rows.push_back(std::move(keyed));
    } else {
      rows[it->second].row.after = std::move(keyed.row.after);
    }
  }
  DiffTable table;
  for (Keyed& keyed : rows) {
    compare(keyed.row, options);
    if (!keyed.row.before.present) {
      table.appeared.push_back(std::move(keyed.row));
    } else if (!keyed.row.after.present) {
      table.vanished.push_back(std::move(keyed.row));
    } else {
      table.matched.push_back(std::move(keyed.row));
    }
  }
  std::stable_sort(table.matched.begin(), table.matched.end(), larger_change_first);
  std::stable_sort(table.appeared.begin(), table.appeared.end(), larger_change_first);
  std::stable_sort(table.vanished.begin(), table.vanished.end(), larger_change_first);
  return table;
}

constexpr RowKind kClassRows = {
    .key_of = [](const FunctionRecord&, const NodeRecord& node) { return node.class_name; },
    .name_row = [](DiffRow& row,
                   const FunctionRecord&,
                   const NodeRecord& node) { row.name = node.class_name; }};

constexpr RowKind kOpRows = {
    .key_of = [](const FunctionRecord&, const NodeRecord& node) { return node.op_name; },
    .name_row = [](DiffRow& row,
                   const FunctionRecord&,
                   const NodeRecord& node) { row.name = node.op_name; }};

// Apply rows: function, printed node name and provenance (an ONNX node's model node name).
constexpr RowKind kApplyRows = {
    .key_of =
        [](const FunctionRecord& function, const NodeRecord& node) {
          return function.name + '\n' + node.apply_name + '\n' + node.user_op;
        },
    .name_row =
        [](DiffRow& row, const FunctionRecord& function, const NodeRecord& node) {
          row.name = node.apply_name;
          row.provenance = node.user_op;
          row.function = function.name;
        },
    .one_row_per_node = true};

// Functions of one profile by name, first seen first; functions sharing a name are summed.
std::vector<std::pair<std::string, std::vector<const FunctionRecord*>>> functions_by_name(
    const Profile& profile) {
  std::vector<std::pair<std::string, std::vector<const FunctionRecord*>>> named;
  for (const FunctionRecord& function : profile.functions) {
    auto it = std::find_if(named.begin(), named.end(),
                           [&](const auto& entry) { return entry.first == function.name; });
    if (it == named.end()) {
      named.push_back({function.name, {&function}});
    } else {
      it->second.push_back(&function);
    }
  }
  return named;
}

DiffMeasure function_measure(const std::vector<const FunctionRecord*>& functions) {
  DiffMeasure measure;
  measure.present = true;
  for (const FunctionRecord* function : functions) {
    const std::string what = "diff: function '" + function->name + "'";
    measure.call_count =
        checked_add(measure.call_count, function->call_count, what, ErrorKind::Parse);
    measure.total_ns = checked_add(measure.total_ns, function->call_ns, what, ErrorKind::Parse);
  }
  return measure;
}

bool holds_function(const Profile& profile, const std::string& name) {
  return std::any_of(profile.functions.begin(), profile.functions.end(),
                     [&](const FunctionRecord& function) { return function.name == name; });
}

// `profile` without the functions `other` does not hold: what the total and the tables compare.
Profile shared_functions(const Profile& profile, const Profile& other) {
  Profile shared = profile;
  std::erase_if(shared.functions, [&](const FunctionRecord& function) {
    return !holds_function(other, function.name);
  });
  return shared;
}

// Function rows: matched in the before profile's order, then those in one profile only.
void diff_functions(const Profile& before,
                    const Profile& after,
                    const std::string& before_source,
                    const std::string& after_source,
                    ProfileDiff& diff) {
  const auto before_named = functions_by_name(before);
  const auto after_named = functions_by_name(after);
  if (before_named.empty() || after_named.empty()) {
    throw_error(ErrorKind::InvalidArgument, "diff: '{}' holds no profiled function",
                before_named.empty() ? before_source : after_source);
  }
  const auto find = [](const auto& named, const std::string& name) {
    return std::find_if(named.begin(), named.end(),
                        [&](const auto& entry) { return entry.first == name; });
  };
  for (const auto& [name, records] : before_named) {
    DiffRow row;
    row.name = name;
    row.before = function_measure(records);
    const auto match = find(after_named, name);
    if (match == after_named.end()) {
      diff.functions_vanished.push_back(std::move(row));
      continue;
    }
    row.after = function_measure(match->second);
    diff.functions.push_back(std::move(row));
  }
  for (const auto& [name, records] : after_named) {
    if (find(before_named, name) != before_named.end()) continue;
    DiffRow row;
    row.name = name;
    row.after = function_measure(records);
    diff.functions_appeared.push_back(std::move(row));
  }
}

struct Peaks {
  std::int64_t simulated_bytes = 0;
  std::int64_t without_gc_bytes = 0;
  std::int64_t measured_bytes = 0;
  std::int64_t min_peak_bytes = -1;
};

// Maxima over functions, as the Memory section prints them.
Peaks peaks_of(const Profile& profile) {
  Peaks peaks;
  for (const FunctionRecord& function : profile.functions) {
    const MemoryRun run = simulate_memory(function, executed_order(function), true);
    peaks.simulated_bytes = std::max(peaks.simulated_bytes, run.peak_bytes);
    peaks.without_gc_bytes = std::max(peaks.without_gc_bytes, run.total_allocated_bytes);
    peaks.measured_bytes = std::max(peaks.measured_bytes, function.measured_peak_bytes);
    if (function.min_peak.searched) {
      peaks.min_peak_bytes = std::max(peaks.min_peak_bytes, function.min_peak.peak_bytes);
    }
  }
  return peaks;
}

std::vector<DiffPeak> diff_peaks(const Profile& before, const Profile& after) {
  const Peaks b = peaks_of(before);
  const Peaks a = peaks_of(after);
  std::vector<DiffPeak> peaks = {
      {"simulated, executed order", b.simulated_bytes, a.simulated_bytes},
      {"simulated, allow_gc=False", b.without_gc_bytes, a.without_gc_bytes},
      {"measured allocator peak", b.measured_bytes, a.measured_bytes}};
  if (b.min_peak_bytes >= 0 || a.min_peak_bytes >= 0) {
    peaks.push_back({"minimum over node orders", b.min_peak_bytes, a.min_peak_bytes});
  }
  return peaks;
}

bool any_slower(const DiffTable& table) {
  return std::any_of(table.matched.begin(), table.matched.end(),
                     [](const DiffRow& row) { return row.slower; });
}
}  // namespace

double DiffMeasure::ns_per_call() const {
  return call_count > 0 ? static_cast<double>(total_ns) / static_cast<double>(call_count) : 0;
}

double DiffMeasure::warm_ns_per_call() const {
  return warm_call_count > 0 ? static_cast<double>(warm_ns) / static_cast<double>(warm_call_count)
                             : 0;
}

double DiffMeasure::fastest_ns_per_call() const {
  return call_count > 0 ? static_cast<double>(fastest_ns) / static_cast<double>(call_count) : 0;
}

ProfileDiff diff_profiles(const Profile& before,
                          const Profile& after,
                          const DiffOptions& options,
                          const std::string& before_source,
                          const std::string& after_source) {
  ProfileDiff diff;
  diff.before_source = before_source;
  diff.after_source = after_source;
  diff.options = options;
  diff_functions(before, after, before_source, after_source, diff);
  for (DiffRow& row : diff.functions) {
    compare(row, options);
    row.slower = false;  // Function rows carry no distribution; the total is gated instead.
  }
  for (DiffRow& row : diff.functions_appeared) compare(row, options);
  for (DiffRow& row : diff.functions_vanished) compare(row, options);
  // A function in one profile only has nothing to compare with; kept in the total or in a
  // Class row it would shift the time per call by what it runs, not by a change.
  const Profile shared_before = shared_functions(before, after);
  const Profile shared_after = shared_functions(after, before);
  diff.total.name = "Time in thunks (all node time)";
  diff.total.before = total_measure(shared_before);
  diff.total.after = total_measure(shared_after);
  compare(diff.total, options);
  diff.classes = diff_table(shared_before, shared_after, diff.total, options, kClassRows);
  diff.ops = diff_table(shared_before, shared_after, diff.total, options, kOpRows);
  diff.nodes = diff_table(shared_before, shared_after, diff.total, options, kApplyRows);
  diff.peaks = diff_peaks(shared_before, shared_after);
  diff.gate_failed = diff.total.slower || any_slower(diff.classes) || any_slower(diff.ops) ||
                     any_slower(diff.nodes);
  return diff;
}

}  // namespace tscope::profile
