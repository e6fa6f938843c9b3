// SPDX-License-Identifier: Apache-2.0
// The "Host zones" section. The table is cProfile's (`ncalls tottime percall cumtime percall`,
// seconds with three decimals), which is what users of Python's profilers already read; the name
// column is "zone (file:line)".
#include <fmt/format.h>
#include <fmt/printf.h>

#include <algorithm>
#include <map>

#include "report_text_sections.h"
#include "tscope/profile/report_text.h"

namespace tscope::profile {
namespace detail {

std::string site_label(const HostRecord& host, std::int64_t site) {
  if (site < 0) return "<outside any zone>";
  const ZoneSiteRecord& record = host.sites[static_cast<std::size_t>(site)];
  if (record.kind == "function") return fmt::format("{} (graph function)", record.name);
  const std::size_t slash = record.file.find_last_of('/');
  const std::string file = slash == std::string::npos ? record.file : record.file.substr(slash + 1);
  return fmt::format("{} ({}:{})", record.name, file, record.line);
}

}  // namespace detail

namespace {

double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

double per_call(std::int64_t ns, std::int64_t calls) {
  return calls == 0 ? 0.0 : seconds(ns) / static_cast<double>(calls);
}

using detail::site_label;

void render_totals_table(const HostRecord& host,
                         const std::vector<ZoneTotals>& rows,
                         std::size_t shown,
                         std::string& out) {
  out += "   ncalls  tottime  percall  cumtime  percall zone (file:line)\n";
  for (std::size_t i = 0; i < shown; ++i) {
    const ZoneTotals& row = rows[i];
    out += fmt::sprintf("%9d %8.3f %8.3f %8.3f %8.3f %s\n", row.call_count, seconds(row.self_ns),
                        per_call(row.self_ns, row.call_count), seconds(row.cumulative_ns),
                        per_call(row.cumulative_ns, row.call_count), site_label(host, row.site));
  }
  if (rows.size() > shown) {
    std::int64_t rest_ns = 0;
    for (std::size_t i = shown; i < rows.size(); ++i) rest_ns += rows[i].self_ns;
    out += fmt::sprintf("   ... %d more rows (tottime %.3fs)\n", rows.size() - shown,
                        seconds(rest_ns));
  }
}

void render_edge_line(const HostRecord& host,
                      const ZoneEdge& edge,
                      std::int64_t site,
                      std::string& out) {
  out += fmt::sprintf("    %9d %8.3f %8.3f  %s\n", edge.call_count, seconds(edge.self_ns),
                      seconds(edge.total_ns), site_label(host, site));
}

void render_callers_callees(const HostRecord& host,
                            const std::vector<ZoneTotals>& rows,
                            std::size_t count,
                            const std::vector<ZoneEdge>& edges,
                            std::string& out) {
  if (count == 0) return;
  out += fmt::format(
      "\n  Callers and callees of the top {} zones (ncalls, tottime and cumtime "
      "of the call under that caller):\n",
      count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t site = rows[i].site;
    out += "  " + site_label(host, site) + "\n";
    out += "    called by:\n";
    for (const ZoneEdge& edge : edges) {
      if (edge.callee == site) render_edge_line(host, edge, edge.caller, out);
    }
    bool any_callee = false;
    for (const ZoneEdge& edge : edges) {
      if (edge.caller != site) continue;
      if (!any_callee) out += "    calls:\n";
      any_callee = true;
      render_edge_line(host, edge, edge.callee, out);
    }
  }
}

// Threads of several processes: each row starts with its process's pid.
void render_threads(const HostRecord& host, std::string& out) {
  const bool by_process = !host.processes.empty();
  out += "\n  Threads (top-level time: cumtime of the zones entered outside any other):\n";
  out += by_process ? "         pid" : "";
  out += "    thread   os tid   zone calls  top-level time  top zone by tottime       name\n";
  for (const ZoneThreadRecord& thread : host.threads) {
    std::int64_t calls = 0, top_level_ns = 0;
    for (const ZoneNodeRecord& node : thread.nodes) {
      calls += node.call_count;
      if (node.parent < 0) top_level_ns += node.total_ns;
    }
    const std::vector<ZoneTotals> totals = zone_totals(thread);
    const auto top = std::max_element(
        totals.begin(), totals.end(),
        [](const ZoneTotals& a, const ZoneTotals& b) { return a.self_ns < b.self_ns; });
    const std::string top_name =
        top == totals.end() ? "-" : host.sites[static_cast<std::size_t>(top->site)].name;
    std::string name = thread.name;
    if (thread.exited) name += name.empty() ? "(exited)" : " (exited)";
    if (by_process) {
      const auto process = static_cast<std::size_t>(thread.process);
      out +=
          fmt::sprintf("  %10d", process < host.processes.size() ? host.processes[process].pid : 0);
    }
    out += fmt::sprintf("    %6d %8d %12d %14.3fs  %-24s  %s\n", thread.thread_index,
                        thread.os_thread_id, calls, seconds(top_level_ns), top_name, name);
  }
}

std::string microseconds_or_dash(std::int64_t ns) {
  return ns < 0 ? std::string("-") : fmt::sprintf("%.1f us", static_cast<double>(ns) * 1e-3);
}

// Worker processes (worker_processes.h): per process its threads, busy and idle time, and the
// workers that left no shard.
void render_processes(const HostRecord& host, std::string& out) {
  if (host.processes.empty()) return;
  out +=
      "\n  Processes (busy: top-level zone time of its threads, added up; idle: life minus busy;\n"
      "  clock error: bound on its start and end against the main process's clock):\n";
  out +=
      "         pid   parent  label  state     threads  zone calls        busy        idle"
      "        life  clock error\n";
  std::string unfinished;
  for (std::size_t i = 0; i < host.processes.size(); ++i) {
    const ProcessRecord& process = host.processes[i];
    std::int64_t threads = 0, calls = 0;
    for (const ZoneThreadRecord& thread : host.threads) {
      if (thread.process != static_cast<std::int64_t>(i)) continue;
      ++threads;
      for (const ZoneNodeRecord& node : thread.nodes) calls += node.call_count;
    }
    const bool ended = process.end_ns != 0;
    const std::int64_t life_ns = ended ? process.end_ns - process.start_ns : -1;
    const auto seconds_or_dash = [](std::int64_t ns) {
      return ns < 0 ? std::string("-") : fmt::sprintf("%.3fs", seconds(ns));
    };
    out += fmt::sprintf(
        "    %8d %8d  %-5s  %-8s %8d %11d %11s %11s %11s  %s\n", process.pid, process.parent_pid,
        process.label.empty() ? "-" : process.label, process.state, threads, calls,
        process.state == "missing" || process.state == "running" ? std::string("-")
                                                                 : seconds_or_dash(process.busy_ns),
        ended ? seconds_or_dash(std::max<std::int64_t>(life_ns - process.busy_ns, 0))
              : std::string("-"),
        seconds_or_dash(life_ns), microseconds_or_dash(process.clock_error_ns));
    if (process.state == "missing") {
      unfinished +=
          fmt::format("  worker {}: missing \u2014 started, no shard (killed?)\n", process.pid);
    } else if (process.state == "running") {
      unfinished += fmt::format(
          "  worker {}: running \u2014 started, no shard yet (still alive at this report)\n",
          process.pid);
    }
  }
  out += unfinished;
}

void render_values(const HostRecord& host, const ZoneThreadRecord& merged, std::string& out) {
  if (merged.values.empty()) return;
  out += "\n  Zone values:\n";
  out += "        count         mean          min          max  value (file:line)\n";
  for (const ZoneValueRecord& value : merged.values) {
    const double mean = value.count == 0 ? 0.0 : value.sum / static_cast<double>(value.count);
    out += fmt::sprintf("    %9d %12.6g %12.6g %12.6g  %s\n", value.count, mean, value.min,
                        value.max, site_label(host, value.site));
  }
}

}  // namespace

std::string render_zone_section(const HostRecord& host, const TextReportOptions& options) {
  if (host.threads.empty() && host.processes.empty()) return "";
  const ZoneThreadRecord merged = merge_zone_threads(host);
  std::vector<ZoneTotals> rows = zone_totals(merged);
  const bool by_cumtime = options.sort_zones_by_cumtime;
  std::stable_sort(rows.begin(), rows.end(),
                   [by_cumtime](const ZoneTotals& a, const ZoneTotals& b) {
                     const std::int64_t a_ns = by_cumtime ? a.cumulative_ns : a.self_ns;
                     const std::int64_t b_ns = by_cumtime ? b.cumulative_ns : b.self_ns;
                     if (a_ns != b_ns) return a_ns > b_ns;
                     return a.call_count > b.call_count;
                   });
  std::int64_t calls = 0;
  for (const ZoneNodeRecord& node : merged.nodes) calls += node.call_count;
  std::int64_t exited = 0;
  for (const ZoneThreadRecord& thread : host.threads) exited += thread.exited ? 1 : 0;

  std::string out = "Host zones\n==========\n";
  out += fmt::format("  {} zone calls in {} threads ({} exited); zone clock: {}\n", calls,
                     host.threads.size(), exited, host.clock.empty() ? "unknown" : host.clock);
  if (host.processes.size() > 0) {
    std::map<std::string, std::int64_t> states;
    for (const ProcessRecord& process : host.processes) states[process.state] += 1;
    std::string counts;
    for (const char* state : {"merged", "missing", "running"}) {
      if (states[state] == 0) continue;
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", states[state], state);
    }
    out += fmt::format("  Processes: {} (worker processes: {}); see Processes below\n",
                       host.processes.size(), counts.empty() ? "none" : counts);
  }
  if (host.zone_overhead_ns >= 0) {
    out += fmt::sprintf("  Zone overhead: %.1f ns per zone enter+exit (measured)\n",
                        host.zone_overhead_ns);
  }
  out +=
      fmt::format("  Sorted by: {} (all threads merged)\n\n", by_cumtime ? "cumtime" : "tottime");
  const std::size_t shown =
      std::min(rows.size(), static_cast<std::size_t>(std::max(options.n_zones, 0)));
  render_totals_table(host, rows, shown, out);
  const std::size_t with_edges =
      std::min(shown, static_cast<std::size_t>(std::max(options.n_zone_callers, 0)));
  render_callers_callees(host, rows, with_edges, zone_edges(merged), out);
  render_processes(host, out);
  render_threads(host, out);
  render_values(host, merged, out);
  out += "\n";
  return out;
}

}  // namespace tscope::profile
