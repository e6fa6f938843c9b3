// SPDX-License-Identifier: Apache-2.0
// The HTML comparison of two profiles (`tscope diff --html`): the text diff's sections as tables
// (every row, sortable; Apply rows filterable) and a change chart per table, slower to the right.
#include <fmt/format.h>

#include <algorithm>

#include "tscope/profile/html_page.h"
#include "tscope/profile/report_diff.h"

namespace tscope::profile {
namespace {

std::string duration_cell(double ns) {
  return fmt::format("<td data-sort=\"{}\">{}</td>", ns, escape_html(format_duration(ns)));
}

std::string ratio_cell(double ratio) {
  return ratio < 0 ? "<td data-sort=\"-1\">-</td>"
                   : fmt::format("<td data-sort=\"{}\">{:.2f}x</td>", ratio, ratio);
}

std::string calls_text(const DiffRow& row) {
  if (!row.before.present) return std::to_string(row.after.call_count);
  if (!row.after.present || row.before.call_count == row.after.call_count) {
    return std::to_string(row.before.call_count);
  }
  return fmt::format("{}->{}", row.before.call_count, row.after.call_count);
}

std::string impl_text(const DiffRow& row) {
  if (row.impl_changed) return row.before.impl + " -> " + row.after.impl;
  return row.before.present ? row.before.impl : row.after.impl;
}

std::string flag_text(const DiffRow& row) {
  std::string text;
  if (row.slower) text += "slower";
  if (row.noise) text += std::string(text.empty() ? "" : ", ") + "noise";
  if (row.impl_changed) text += std::string(text.empty() ? "" : ", ") + "impl";
  return text.empty() ? "-" : text;
}

std::string row_label(const DiffRow& row, bool several_functions) {
  return several_functions && !row.function.empty() ? row.function + ": " + row.name : row.name;
}

std::string matched_table(const std::vector<DiffRow>& rows,
                          const std::string& id,
                          bool several_functions) {
  std::string out = "<table class=\"sortable\" id=\"" + id + "\"><thead><tr>";
  out +=
      "<th class=\"name\">name</th><th class=\"text\">from</th><th>before</th><th>after</th>"
      "<th>change</th><th>ratio</th><th>fastest</th><th>share</th><th>calls</th>"
      "<th class=\"text\">impl</th><th class=\"text\">flag</th></tr></thead><tbody>\n";
  for (const DiffRow& row : rows) {
    out += row.slower ? "<tr class=\"slower\">" : "<tr>";
    out += "<td class=\"name\">" + escape_html(row_label(row, several_functions)) + "</td>";
    out += "<td class=\"text\">" + escape_html(row.provenance) + "</td>";
    out += duration_cell(static_cast<double>(row.before.total_ns)) +
           duration_cell(static_cast<double>(row.after.total_ns)) +
           duration_cell(static_cast<double>(row.change_ns)) + ratio_cell(row.ratio) +
           ratio_cell(row.fastest_ratio);
    const double share = std::max(row.before.share_percent, row.after.share_percent);
    out += fmt::format("<td data-sort=\"{}\">{:.1f}%</td>", share, share);
    out += "<td>" + escape_html(calls_text(row)) + "</td>";
    out += "<td class=\"text\">" + escape_html(impl_text(row)) + "</td>";
    out += "<td class=\"text\">" + escape_html(flag_text(row)) + "</td></tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string one_sided_table(const std::vector<DiffRow>& rows, bool after, bool several_functions) {
  std::string out =
      "<table class=\"sortable\"><thead><tr><th class=\"name\">name</th>"
      "<th class=\"text\">from</th><th>time</th><th>time per call</th>"
      "<th>share</th><th>calls</th><th class=\"text\">impl</th></tr></thead><tbody>\n";
  for (const DiffRow& row : rows) {
    const DiffMeasure& measure = after ? row.after : row.before;
    out += "<tr><td class=\"name\">" + escape_html(row_label(row, several_functions)) + "</td>";
    out += "<td class=\"text\">" + escape_html(row.provenance) + "</td>";
    out +=
        duration_cell(static_cast<double>(measure.total_ns)) + duration_cell(measure.ns_per_call());
    out += fmt::format("<td data-sort=\"{}\">{:.1f}%</td>", measure.share_percent,
                       measure.share_percent);
    out += fmt::format("<td>{}</td><td class=\"text\">{}</td></tr>\n", measure.call_count,
                       escape_html(measure.impl));
  }
  return out + "</tbody></table>\n";
}

struct TableSection {
  std::string html;
  int charts = 0;
};

TableSection table_section(const DiffTable& table,
                           const std::string& id,
                           const std::string& heading,
                           bool several_functions,
                           const DiffReportOptions& options) {
  TableSection section;
  std::string& out = section.html;
  out += "<section id=\"" + id + "\"><h2>" + escape_html(heading) + "</h2>\n";
  if (!table.matched.empty()) {
    std::vector<ChartBar> bars;
    const std::size_t shown =
        std::min(table.matched.size(), static_cast<std::size_t>(std::max(options.n_rows, 1)));
    for (std::size_t i = 0; i < shown; ++i) {
      const DiffRow& row = table.matched[i];
      const double change = static_cast<double>(row.change_ns);
      bars.push_back(
          {.label = row_label(row, several_functions),
           .value = change,
           .value_text = (change > 0 ? "+" : "") + format_duration(change) +
                         (row.ratio >= 0 ? fmt::format("  {:.2f}x", row.ratio) : ""),
           .tooltip = fmt::format("{}: {} -> {} ({})", row.name,
                                  format_duration(static_cast<double>(row.before.total_ns)),
                                  format_duration(static_cast<double>(row.after.total_ns)),
                                  flag_text(row))});
    }
    out += svg_bar_chart(bars, fmt::format("{}: change in total time (after - before), largest "
                                           "first; red: more time, green: less",
                                           heading));
    section.charts = 1;
    out += fmt::format(
        "<p><input type=\"search\" placeholder=\"filter rows\" data-filter=\"{0}-table\" "
        "aria-label=\"filter the {1} rows\"><span class=\"count\" id=\"{0}-table-count\">{2} "
        "rows</span></p>\n",
        id, escape_html(heading), table.matched.size());
    out += matched_table(table.matched, id + "-table", several_functions);
  } else {
    out += "<p>No row in both profiles.</p>\n";
  }
  if (!table.appeared.empty()) {
    out += fmt::format("<h3>Appeared (only in after): {}</h3>\n", table.appeared.size());
    out += one_sided_table(table.appeared, true, several_functions);
  }
  if (!table.vanished.empty()) {
    out += fmt::format("<h3>Vanished (only in before): {}</h3>\n", table.vanished.size());
    out += one_sided_table(table.vanished, false, several_functions);
  }
  out += "</section>\n";
  return section;
}

std::string functions_section(const ProfileDiff& diff) {
  std::string out = "<section id=\"functions\"><h2>Functions</h2>\n";
  out +=
      "<table class=\"sortable\"><thead><tr><th class=\"name\">function</th><th>calls</th>"
      "<th>before</th><th>after</th><th>change</th><th>ratio</th><th>fastest</th>"
      "<th>before per call</th><th>after per call</th><th class=\"text\">flag</th>"
      "</tr></thead><tbody>\n";
  std::vector<DiffRow> rows = diff.functions;
  rows.push_back(diff.total);
  for (const DiffRow& row : rows) {
    out += row.slower ? "<tr class=\"slower\">" : "<tr>";
    out += "<td class=\"name\">" + escape_html(row.name) + "</td><td>" +
           escape_html(calls_text(row)) + "</td>" +
           duration_cell(static_cast<double>(row.before.total_ns)) +
           duration_cell(static_cast<double>(row.after.total_ns)) +
           duration_cell(static_cast<double>(row.change_ns)) + ratio_cell(row.ratio) +
           ratio_cell(row.fastest_ratio) + duration_cell(row.before.ns_per_call()) +
           duration_cell(row.after.ns_per_call()) + "<td class=\"text\">" +
           escape_html(flag_text(row)) + "</td></tr>\n";
  }
  out += "</tbody></table>\n";
  if (!diff.functions_appeared.empty()) {
    out += "<h3>Functions that appeared (only in after)</h3>\n" +
           one_sided_table(diff.functions_appeared, true, false);
  }
  if (!diff.functions_vanished.empty()) {
    out += "<h3>Functions that vanished (only in before)</h3>\n" +
           one_sided_table(diff.functions_vanished, false, false);
  }
  return out + "</section>\n";
}

std::string bytes_cell(std::int64_t bytes) {
  return bytes < 0 ? "<td data-sort=\"-1\">-</td>"
                   : fmt::format("<td data-sort=\"{}\">{}</td>", bytes,
                                 escape_html(format_bytes(static_cast<double>(bytes))));
}

std::string peaks_section(const ProfileDiff& diff) {
  std::string out = "<section id=\"memory\"><h2>Memory peaks</h2>\n";
  if (diff.peaks.empty()) return out + "<p>No memory peak recorded.</p></section>\n";
  out += "<p class=\"note\">The max over the functions both profiles hold.</p>\n";
  out +=
      "<table><thead><tr><th class=\"text\">peak</th><th>before</th><th>after</th>"
      "<th>change</th></tr></thead><tbody>\n";
  for (const DiffPeak& peak : diff.peaks) {
    const bool both = peak.before_bytes >= 0 && peak.after_bytes >= 0;
    out += "<tr><td class=\"text\">" + escape_html(peak.name) + "</td>" +
           bytes_cell(peak.before_bytes) + bytes_cell(peak.after_bytes);
    const std::int64_t change = peak.after_bytes - peak.before_bytes;
    out += both ? "<td>" + std::string(change > 0 ? "+" : "") +
                      escape_html(format_bytes(static_cast<double>(change))) + "</td>"
                : "<td>-</td>";
    out += "</tr>\n";
  }
  return out + "</tbody></table></section>\n";
}

std::string summary(const ProfileDiff& diff) {
  std::string out = "<header><h1>Tensorscope profile comparison</h1>\n";
  out += "<table><tbody>\n<tr><th class=\"text\">before</th><td class=\"name\">" +
         escape_html(diff.before_source) +
         "</td></tr>\n<tr><th class=\"text\">after</th>"
         "<td class=\"name\">" +
         escape_html(diff.after_source) + "</td></tr>\n";
  out += fmt::format(
      "<tr><th class=\"text\">node time per call</th><td class=\"text\">{} -> {}{}</td></tr>\n",
      escape_html(format_duration(diff.total.before.ns_per_call())),
      escape_html(format_duration(diff.total.after.ns_per_call())),
      diff.total.ratio >= 0 ? fmt::format(" ({:.2f}x)", diff.total.ratio) : "");
  out += fmt::format(
      "<tr><th class=\"text\">gate</th><td class=\"text\"><span class=\"{}\">{}</span>: slower "
      "means the mean time per call and the fastest call both up by more than {:.1f}%, on the "
      "total or on a row holding at least {:.1f}% of the steady node time (every node at its "
      "fastest call)</td></tr>\n",
      diff.gate_failed ? "verdict-failed" : "verdict-passed",
      diff.gate_failed ? "slower" : "not slower", diff.options.slower_percent,
      diff.options.min_share_percent);
  out +=
      "</tbody></table>\n<nav><a href=\"#functions\">Functions</a><a href=\"#memory\">Memory "
      "peaks</a><a href=\"#classes\">Class</a><a href=\"#ops\">Ops</a><a href=\"#apply\">"
      "Apply</a></nav></header>\n";
  return out;
}

}  // namespace

std::string render_diff_html(const ProfileDiff& diff, const DiffReportOptions& options) {
  const bool several_functions = diff.functions.size() > 1;
  HtmlPage page{.title =
                    "Tensorscope comparison: " + diff.before_source + " -> " + diff.after_source};
  page.body += summary(diff) + functions_section(diff) + peaks_section(diff);
  const TableSection classes =
      table_section(diff.classes, "classes", "Class", several_functions, options);
  const TableSection ops = table_section(diff.ops, "ops", "Ops", several_functions, options);
  const TableSection nodes =
      table_section(diff.nodes, "apply", "Apply", several_functions, options);
  page.body += classes.html + ops.html + nodes.html;
  page.chart_count = classes.charts + ops.charts + nodes.charts;
  return render_html_page(page);
}

}  // namespace tscope::profile
