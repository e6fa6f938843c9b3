// SPDX-License-Identifier: Apache-2.0
// The HTML report (report_html.h): the page and its table sections. Tables carry every row (the
// page filters them); charts show the top rows. Each number cell keeps its raw value in
// data-sort, so sorting is numeric whatever the printed unit.
#include "tscope/profile/report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "report_html_sections.h"
#include "tscope/profile/html_page.h"
#include "tscope/profile/report_folded.h"
#include "tscope/profile/tips.h"

namespace tscope::profile {
namespace {

using detail::HtmlSection;

std::string number_cell(double sort_value, const std::string& text) {
  return fmt::format("<td data-sort=\"{}\">{}</td>", sort_value, escape_html(text));
}

std::string text_cell(const std::string& text, const char* css_class = "text") {
  return fmt::format("<td class=\"{}\">{}</td>", css_class, escape_html(text));
}

std::string header_row(const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string out = "<thead><tr>";
  for (const auto& [css_class, text] : headers) {
    out += css_class.empty() ? "<th>" : "<th class=\"" + css_class + "\">";
    out += escape_html(text) + "</th>";
  }
  return out + "</tr></thead>\n";
}

std::string percent_text(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100.0 * part / whole) : "-";
}

struct Group {
  std::string name;
  std::int64_t total_ns = 0;
  std::int64_t call_count = 0;
  std::int64_t node_count = 0;
  std::string impls;  // distinct, first seen first, comma separated
};

// Class or Ops rows, costliest first, as in the text report.
std::vector<Group> group_nodes(const Profile& profile, bool by_class) {
  std::vector<Group> groups;
  std::map<std::string, std::size_t> index;
  for (const FunctionRecord& function : profile.functions) {
    for (const NodeRecord& node : function.nodes) {
      const std::string& key = by_class ? node.class_name : node.op_name;
      const auto [it, inserted] = index.try_emplace(key, groups.size());
      if (inserted) groups.push_back({.name = key});
      Group& group = groups[it->second];
      group.total_ns += node.total_ns;
      group.call_count += node.call_count;
      group.node_count += 1;
      const std::string padded = "," + group.impls + ",";
      if (padded.find("," + node.impl + ",") == std::string::npos) {
        group.impls += (group.impls.empty() ? "" : ",") + node.impl;
      }
    }
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& a, const Group& b) { return a.total_ns > b.total_ns; });
  return groups;
}

HtmlSection function_section(const Profile& profile) {
  HtmlSection section{.id = "functions", .heading = "Functions"};
  std::string& out = section.html;
  const double all_ns = static_cast<double>(profile.kernel_ns());
  out += "<table class=\"sortable\">" +
         header_row({{"name", "function"},
                     {"", "calls"},
                     {"", "call time"},
                     {"", "VM loop"},
                     {"", "node time"},
                     {"", "share of node time"},
                     {"", "time per call"},
                     {"", "compile time"},
                     {"", "nodes"}}) +
         "<tbody>\n";
  for (const FunctionRecord& function : profile.functions) {
    std::int64_t node_ns = 0;
    for (const NodeRecord& node : function.nodes) node_ns += node.total_ns;
    const double per_call = function.call_count > 0 ? static_cast<double>(function.call_ns) /
                                                          static_cast<double>(function.call_count)
                                                    : 0.0;
    out +=
        "<tr>" + text_cell(function.name, "name") +
        number_cell(static_cast<double>(function.call_count), std::to_string(function.call_count)) +
        number_cell(static_cast<double>(function.call_ns),
                    format_duration(static_cast<double>(function.call_ns))) +
        number_cell(static_cast<double>(function.vm_ns),
                    format_duration(static_cast<double>(function.vm_ns))) +
        number_cell(static_cast<double>(node_ns), format_duration(static_cast<double>(node_ns))) +
        number_cell(static_cast<double>(node_ns),
                    percent_text(static_cast<double>(node_ns), all_ns)) +
        number_cell(per_call, format_duration(per_call)) +
        number_cell(static_cast<double>(function.compile.total_ns),
                    format_duration(static_cast<double>(function.compile.total_ns))) +
        number_cell(static_cast<double>(function.nodes.size()),
                    std::to_string(function.nodes.size())) +
        "</tr>\n";
  }
  out += "</tbody></table>\n";
  std::vector<std::pair<std::string, std::string>> settings;
  if (!profile.clock.empty()) {
    settings.emplace_back("node clock", profile.clock + (profile.clock_read_ns >= 0
                                                             ? fmt::format(" ({:.1f} ns per read)",
                                                                           profile.clock_read_ns)
                                                             : ""));
  }
  if (profile.overhead_ns_per_node >= 0) {
    settings.emplace_back("profiler overhead", fmt::format("{:.1f} ns per node execution",
                                                           profile.overhead_ns_per_node));
  }
  if (!profile.blas.empty()) settings.emplace_back("BLAS", profile.blas);
  if (!profile.openmp.empty()) settings.emplace_back("OpenMP", profile.openmp);
  if (profile.roof_bytes_per_second > 0) {
    settings.emplace_back("machine roof", fmt::format("{:.1f} GB/s, {:.1f} Gflop/s (one thread)",
                                                      profile.roof_bytes_per_second / 1e9,
                                                      profile.roof_flops_per_second / 1e9));
  }
  if (!settings.empty()) {
    out += "<table><tbody>\n";
    for (const auto& [name, value] : settings) {
      out += "<tr><th class=\"text\">" + escape_html(name) + "</th>" + text_cell(value) + "</tr>\n";
    }
    out += "</tbody></table>\n";
  }
  return section;
}

HtmlSection group_chart_section(const Profile& profile, bool by_class, int max_rows) {
  HtmlSection section{.id = by_class ? "classes" : "ops",
                      .heading = by_class ? "Time by class" : "Time by op"};
  const std::vector<Group> groups = group_nodes(profile, by_class);
  const double all_ns = static_cast<double>(profile.kernel_ns());
  std::vector<ChartBar> bars;
  const std::size_t shown =
      std::min(groups.size(), static_cast<std::size_t>(std::max(max_rows, 1)));
  for (std::size_t i = 0; i < shown; ++i) {
    const Group& group = groups[i];
    const double ns = static_cast<double>(group.total_ns);
    bars.push_back(
        {.label = group.name,
         .category = group.impls,
         .value = ns,
         .value_text = format_duration(ns) + "  " + percent_text(ns, all_ns),
         .tooltip = fmt::format("{} <{}>: {} ({} of node time), {} calls, {} nodes", group.name,
                                group.impls, format_duration(ns), percent_text(ns, all_ns),
                                group.call_count, group.node_count)});
  }
  if (groups.size() > shown) {
    double rest_ns = 0;
    for (std::size_t i = shown; i < groups.size(); ++i) {
      rest_ns += static_cast<double>(groups[i].total_ns);
    }
    bars.push_back({.label = fmt::format("remaining {}", groups.size() - shown),
                    .value = rest_ns,
                    .value_text = format_duration(rest_ns) + "  " + percent_text(rest_ns, all_ns)});
  }
  section.html = svg_bar_chart(
      bars, fmt::format("Node time by {} (kernel implementation in <>), costliest first",
                        by_class ? "op class" : "op"));
  section.charts = 1;
  return section;
}

HtmlSection apply_section(const Profile& profile) {
  HtmlSection section{.id = "apply", .heading = "Apply nodes"};
  std::string& out = section.html;
  struct Row {
    const FunctionRecord* function;
    const NodeRecord* node;
  };
  std::vector<Row> rows;
  for (const FunctionRecord& function : profile.functions) {
    for (const NodeRecord& node : function.nodes) rows.push_back({&function, &node});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.node->total_ns > b.node->total_ns; });
  const double all_ns = static_cast<double>(profile.kernel_ns());
  const bool several_functions = profile.functions.size() > 1;
  out +=
      "<p><input type=\"search\" placeholder=\"filter rows (name, op, impl, source)\" "
      "data-filter=\"apply-table\" aria-label=\"filter the Apply table\"><span class=\"count\" "
      "id=\"apply-table-count\">" +
      fmt::format("{} rows", rows.size()) +
      "</span></p>\n<p class=\"note\">Click a column header to sort by it.</p>\n";
  std::vector<std::pair<std::string, std::string>> headers = {
      {"", "% time"},  {"", "apply time"}, {"", "time per call"},
      {"", "min"},     {"", "max"},        {"", "calls"},
      {"", "id"},      {"", "Mflops"},     {"", "Gflops/s"},
      {"text", "impl"}};
  if (several_functions) headers.emplace_back("name", "function");
  headers.insert(headers.end(), {{"name", "apply name"}, {"text", "user op"}, {"text", "source"}});
  out += "<table class=\"sortable\" id=\"apply-table\">" + header_row(headers) + "<tbody>\n";
  for (const Row& row : rows) {
    const NodeRecord& node = *row.node;
    const double ns = static_cast<double>(node.total_ns);
    const double per_call = node.call_count > 0 ? ns / static_cast<double>(node.call_count) : 0.0;
    out += "<tr>" + number_cell(ns, percent_text(ns, all_ns)) +
           number_cell(ns, format_duration(ns)) + number_cell(per_call, format_duration(per_call)) +
           number_cell(static_cast<double>(node.min_ns),
                       format_duration(static_cast<double>(node.min_ns))) +
           number_cell(static_cast<double>(node.max_ns),
                       format_duration(static_cast<double>(node.max_ns))) +
           number_cell(static_cast<double>(node.call_count), std::to_string(node.call_count)) +
           number_cell(static_cast<double>(node.topo_index), std::to_string(node.topo_index));
    if (node.flops_per_call >= 0 && node.total_ns > 0) {
      const double gflops =
          node.flops_per_call * static_cast<double>(node.call_count) / (ns * 1e-9) / 1e9;
      out +=
          number_cell(node.flops_per_call / 1e6, fmt::format("{:.1f}", node.flops_per_call / 1e6)) +
          number_cell(gflops, fmt::format("{:.1f}", gflops));
    } else {
      out += number_cell(-1, "") + number_cell(-1, "");
    }
    out += text_cell(node.impl);
    if (several_functions) out += text_cell(row.function->name, "name");
    out += text_cell(node.apply_name, "name") + text_cell(node.user_op) +
           text_cell(node.source_site) + "</tr>\n";
  }
  out += "</tbody></table>\n";
  return section;
}

HtmlSection tips_section(const Profile& profile) {
  HtmlSection section{.id = "tips", .heading = "Tips"};
  const std::vector<Tip> tips = collect_tips(profile);
  if (tips.empty()) {
    section.html = "<p>Sorry, no tip for today.</p>\n";
    return section;
  }
  section.html = "<ul class=\"tips\">\n";
  for (const Tip& tip : tips) {
    section.html +=
        "<li><strong>" + escape_html(tip.rule) + "</strong>: " + escape_html(tip.text) + "</li>\n";
  }
  section.html += "</ul>\n";
  return section;
}

bool has_nodes(const Profile& profile) {
  return std::any_of(profile.functions.begin(), profile.functions.end(),
                     [](const FunctionRecord& function) { return !function.nodes.empty(); });
}

}  // namespace

std::string render_html(const Profile& profile, const HtmlReportOptions& options) {
  std::vector<HtmlSection> sections;
  if (!profile.functions.empty()) sections.push_back(function_section(profile));
  if (has_nodes(profile)) {
    sections.push_back(group_chart_section(profile, /*by_class=*/true, options.n_chart_rows));
    sections.push_back(group_chart_section(profile, /*by_class=*/false, options.n_chart_rows));
    sections.push_back(apply_section(profile));
    sections.push_back(detail::html_memory_section(profile, options.n_memory_charts));
    sections.push_back(tips_section(profile));
  }
  const std::vector<FoldedStack> stacks = folded_stacks(profile);
  if (!stacks.empty()) {
    sections.push_back(detail::html_flame_graph_section(stacks, !profile.host.empty()));
  }
  if (options.trace != nullptr) {
    sections.push_back(detail::html_timeline_section(*options.trace, options.n_timeline_slices));
  }

  std::vector<std::string> names;
  for (const FunctionRecord& function : profile.functions) names.push_back(function.name);
  std::string subtitle = profile.title;
  if (subtitle.empty()) {
    for (const std::string& name : names) subtitle += (subtitle.empty() ? "" : ", ") + name;
  }
  HtmlPage page{.title = "Tensorscope profile: " + subtitle};
  std::string& body = page.body;
  body += "<header><h1>Tensorscope profile</h1>\n<p class=\"note\">" + escape_html(subtitle);
  if (!options.source.empty()) body += " &mdash; " + escape_html(options.source);
  body += "</p>\n<nav>";
  for (const HtmlSection& section : sections) {
    body += "<a href=\"#" + section.id + "\">" + escape_html(section.heading) + "</a>";
  }
  body += "</nav></header>\n";
  for (const HtmlSection& section : sections) {
    body += "<section id=\"" + section.id + "\"><h2>" + escape_html(section.heading) + "</h2>\n" +
            section.html + "</section>\n";
    page.chart_count += section.charts;
  }
  if (sections.empty()) body += "<p>The profile holds no function and no host zone.</p>\n";
  return render_html_page(page);
}

}  // namespace tscope::profile
