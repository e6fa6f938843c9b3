// SPDX-License-Identifier: Apache-2.0
// The text comparison of two profiles (`tscope diff`). Columns follow the text report: printf
// segments joined by one space under "<header>" cells.
#include "tscope/profile/report_diff.h"

#include <fmt/format.h>
#include <fmt/printf.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tscope::profile {
namespace {

double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }
double seconds(double ns) { return ns * 1e-9; }

std::int64_t kilobytes(std::int64_t bytes) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(bytes) / 1024.0));
}

std::string join(const std::vector<std::string>& parts) {
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i > 0 ? " " : "") + parts[i];
  return text;
}

std::string ratio_cell(double ratio) {
  return ratio < 0 ? fmt::sprintf("%7s", "-") : fmt::sprintf("%6.2fx", ratio);
}

// The <fastest> column: the ratio of the fastest call per call, after / before.
std::string fastest_cell(const DiffRow& row) {
  return row.fastest_ratio < 0 ? fmt::sprintf("%9s", "-")
                               : fmt::sprintf("%8.2fx", row.fastest_ratio);
}

std::string calls_cell(const DiffRow& row) {
  if (row.before.call_count == row.after.call_count) {
    return fmt::sprintf("%9d", row.before.call_count);
  }
  return fmt::sprintf("%9s", fmt::format("{}->{}", row.before.call_count, row.after.call_count));
}

std::string impl_cell(const DiffRow& row) {
  const std::string impl =
      row.impl_changed ? row.before.impl + "->" + row.after.impl : row.before.impl;
  return fmt::sprintf("%10s", impl);
}

// Words for the <flag> column: slower (fails the gate), noise, impl (implementation changed).
std::string flag_cell(const DiffRow& row) {
  std::vector<std::string> flags;
  if (row.slower) flags.push_back("slower");
  if (row.noise) flags.push_back("noise");
  if (row.impl_changed) flags.push_back("impl");
  std::string text;
  for (const std::string& flag : flags) text += (text.empty() ? "" : ",") + flag;
  return fmt::sprintf("%-12s", text.empty() ? "-" : text);
}

std::string row_name(const DiffRow& row, bool several_functions) {
  return several_functions && !row.function.empty() ? row.function + ": " + row.name : row.name;
}

// Nodes imported from a model name the model node they came from, as in the Apply table.
void add_provenance_line(const DiffRow& row, std::string& out) {
  if (row.provenance.starts_with("onnx:")) out += fmt::format("    <- {}\n", row.provenance);
}

void render_header(const ProfileDiff& diff, std::string& out) {
  out += "Profile comparison\n==================\n";
  out += "  Before: " + diff.before_source + "\n";
  out += "  After: " + diff.after_source + "\n";
  out += fmt::sprintf(
      "  Slower: mean time per call and fastest call both up by more than %.1f%% (the fastest call "
      "also by more than half the row's spread before: its warm mean over its fastest call), on "
      "the total or on a row holding at least %.1f%% of the steady node time (every node at its "
      "fastest call)\n",
      diff.options.slower_percent, diff.options.min_share_percent);
  out +=
      "  Noise: the mean time per call is up by more than that but the fastest call is not (a "
      "cold first call, a spike, a kernel whose calls scatter)\n\n";
}

void render_functions(const ProfileDiff& diff, std::string& out) {
  out += "Function\n--------\n";
  out += join({"   <#call>", "   <before>", "    <after>", "   <change>", "<ratio>", "<fastest>",
               "<before/call>", " <after/call>", "<flag>      ", "<Function name>"}) +
         "\n";
  const auto render_row = [&](const DiffRow& row) {
    out += join({calls_cell(row), fmt::sprintf("%10.3es", seconds(row.before.total_ns)),
                 fmt::sprintf("%10.3es", seconds(row.after.total_ns)),
                 fmt::sprintf("%+10.3es", seconds(row.change_ns)), ratio_cell(row.ratio),
                 fastest_cell(row), fmt::sprintf("%12.3es", seconds(row.before.ns_per_call())),
                 fmt::sprintf("%12.3es", seconds(row.after.ns_per_call())), flag_cell(row),
                 row.name}) +
           "\n";
  };
  for (const DiffRow& row : diff.functions) render_row(row);
  render_row(diff.total);
  out += "\n";
}

// Functions in one profile only: left out of the total and of every table below.
void render_one_sided_functions(const std::vector<DiffRow>& rows,
                                bool after,
                                const std::string& title,
                                std::string& out) {
  if (rows.empty()) return;
  out += fmt::format("{}: {}\n", title, rows.size());
  out += join({"   <#call>", "     <time>", "  <time/call>", "<Function name>"}) + "\n";
  for (const DiffRow& row : rows) {
    const DiffMeasure& measure = after ? row.after : row.before;
    out += join({fmt::sprintf("%9d", measure.call_count),
                 fmt::sprintf("%10.3es", seconds(measure.total_ns)),
                 fmt::sprintf("%12.3es", seconds(measure.ns_per_call())), row.name}) +
           "\n";
  }
  out += "\n";
}

std::string bytes_cell(std::int64_t bytes) {
  return bytes < 0 ? fmt::sprintf("%10s", "-") : fmt::sprintf("%8dKB", kilobytes(bytes));
}

void render_peaks(const ProfileDiff& diff, std::string& out) {
  out += "Memory peaks (the max over functions)\n---\n";
  out += join({"  <before>", "   <after>", "  <change>", "<ratio>", "<peak>"}) + "\n";
  for (const DiffPeak& peak : diff.peaks) {
    const bool both = peak.before_bytes >= 0 && peak.after_bytes >= 0;
    const std::string change =
        both ? fmt::sprintf("%+8dKB", kilobytes(peak.after_bytes) - kilobytes(peak.before_bytes))
             : fmt::sprintf("%10s", "-");
    const double ratio = both && peak.before_bytes > 0 ? static_cast<double>(peak.after_bytes) /
                                                             static_cast<double>(peak.before_bytes)
                                                       : -1;
    out += join({bytes_cell(peak.before_bytes), bytes_cell(peak.after_bytes), change,
                 ratio_cell(ratio), peak.name}) +
           "\n";
  }
  out += "\n";
}

void render_matched(const std::vector<DiffRow>& rows,
                    const std::string& name_header,
                    bool several_functions,
                    const DiffReportOptions& options,
                    std::string& out) {
  out += join({"   <before>", "    <after>", "   <change>", "<ratio>", "<fastest>", "<share>",
               "   <#call>", "    <impl>", "<flag>      ", name_header}) +
         "\n";
  const std::size_t shown = std::min(rows.size(), static_cast<std::size_t>(options.n_rows));
  for (std::size_t i = 0; i < shown; ++i) {
    const DiffRow& row = rows[i];
    out +=
        join({fmt::sprintf("%10.3es", seconds(row.before.total_ns)),
              fmt::sprintf("%10.3es", seconds(row.after.total_ns)),
              fmt::sprintf("%+10.3es", seconds(row.change_ns)), ratio_cell(row.ratio),
              fastest_cell(row),
              fmt::sprintf("%6.1f%%", std::max(row.before.share_percent, row.after.share_percent)),
              calls_cell(row), impl_cell(row), flag_cell(row), row_name(row, several_functions)}) +
        "\n";
    add_provenance_line(row, out);
  }
  if (rows.size() > shown) {
    std::int64_t rest_ns = 0;
    std::size_t rest_slower = 0;
    for (std::size_t i = shown; i < rows.size(); ++i) {
      rest_ns += rows[i].change_ns;
      if (rows[i].slower) ++rest_slower;
    }
    out += fmt::sprintf("   ... (remaining %d rows change the time by %+.3es; %d of them slower)\n",
                        rows.size() - shown, seconds(rest_ns), rest_slower);
  }
}

// Rows only one profile has: their time and share there.
void render_one_sided(const std::vector<DiffRow>& rows,
                      bool after,
                      const std::string& title,
                      const std::string& name_header,
                      bool several_functions,
                      const DiffReportOptions& options,
                      std::string& out) {
  out += fmt::format("{}: {}\n", title, rows.size());
  if (rows.empty()) return;
  out += join({"     <time>", "<share>", "   <#call>", "    <impl>", name_header}) + "\n";
  const std::size_t shown = std::min(rows.size(), static_cast<std::size_t>(options.n_rows));
  for (std::size_t i = 0; i < shown; ++i) {
    const DiffMeasure& measure = after ? rows[i].after : rows[i].before;
    out += join({fmt::sprintf("%10.3es", seconds(measure.total_ns)),
                 fmt::sprintf("%6.1f%%", measure.share_percent),
                 fmt::sprintf("%9d", measure.call_count), fmt::sprintf("%10s", measure.impl),
                 row_name(rows[i], several_functions)}) +
           "\n";
    add_provenance_line(rows[i], out);
  }
  if (rows.size() > shown) {
    std::int64_t rest_ns = 0;
    for (std::size_t i = shown; i < rows.size(); ++i) {
      rest_ns += after ? rows[i].after.total_ns : rows[i].before.total_ns;
    }
    out += fmt::sprintf("   ... (remaining %d rows account for %.3es)\n", rows.size() - shown,
                        seconds(rest_ns));
  }
}

void render_table(const DiffTable& table,
                  const std::string& title,
                  const std::string& noun,
                  bool several_functions,
                  const DiffReportOptions& options,
                  std::string& out) {
  const std::string name_header = "<" + noun + " name>";
  out += title + "\n" + std::string(title.size(), '-') + "\n";
  render_matched(table.matched, name_header, several_functions, options, out);
  out += "\n";
  render_one_sided(table.appeared, true, title + " rows that appeared (only in after)", name_header,
                   several_functions, options, out);
  out += "\n";
  render_one_sided(table.vanished, false, title + " rows that vanished (only in before)",
                   name_header, several_functions, options, out);
  out += "\n";
}

std::size_t count_slower(const DiffTable& table) {
  return static_cast<std::size_t>(std::count_if(table.matched.begin(), table.matched.end(),
                                                [](const DiffRow& row) { return row.slower; }));
}

std::size_t count_impl_changes(const DiffTable& table) {
  return static_cast<std::size_t>(
      std::count_if(table.matched.begin(), table.matched.end(),
                    [](const DiffRow& row) { return row.impl_changed; }));
}

void render_verdict(const ProfileDiff& diff, std::string& out) {
  out += "Verdict\n-------\n";
  if (!diff.functions_appeared.empty() || !diff.functions_vanished.empty()) {
    out += fmt::sprintf("  Functions appeared: %d, vanished: %d (not compared)\n",
                        diff.functions_appeared.size(), diff.functions_vanished.size());
  }
  if (diff.functions.empty()) out += "  No function is in both profiles: nothing was compared\n";
  const DiffRow& total = diff.total;
  if (total.ratio >= 0) {
    out += fmt::sprintf("  Total time per call: %.3es -> %.3es (%+.1f%%)%s\n",
                        seconds(total.before.ns_per_call()), seconds(total.after.ns_per_call()),
                        100.0 * (total.ratio - 1.0),
                        total.slower ? ", slower" : (total.noise ? ", within noise" : ""));
  }
  out += fmt::sprintf("  Slower rows: Class %d, Ops %d, Apply %d\n", count_slower(diff.classes),
                      count_slower(diff.ops), count_slower(diff.nodes));
  out += fmt::sprintf("  Apply nodes with a changed implementation: %d\n",
                      count_impl_changes(diff.nodes));
  out += fmt::sprintf("  Apply nodes appeared: %d, vanished: %d\n", diff.nodes.appeared.size(),
                      diff.nodes.vanished.size());
  out += fmt::sprintf(
      "  Result: %s\n",
      diff.gate_failed
          ? fmt::sprintf("slower by more than %.1f%%", diff.options.slower_percent)
          : fmt::sprintf("not slower by more than %.1f%%", diff.options.slower_percent));
}

}  // namespace

std::string render_diff_text(const ProfileDiff& diff, const DiffReportOptions& options) {
  const bool several_functions = diff.functions.size() > 1;
  std::string out;
  render_header(diff, out);
  render_functions(diff, out);
  render_one_sided_functions(diff.functions_appeared, true,
                             "Functions that appeared (only in after)", out);
  render_one_sided_functions(diff.functions_vanished, false,
                             "Functions that vanished (only in before)", out);
  render_peaks(diff, out);
  render_table(diff.classes, "Class", "Class", several_functions, options, out);
  render_table(diff.ops, "Ops", "Op", several_functions, options, out);
  render_table(diff.nodes, "Apply", "Apply", several_functions, options, out);
  render_verdict(diff, out);
  return out;
}

}  // namespace tscope::profile
