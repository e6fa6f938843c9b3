// SPDX-License-Identifier: Apache-2.0
// `tscope report a.json [b.json ...]`: re-render profiles saved as JSON. One file prints exactly
// what the process that wrote it printed (same report options); several files are merged into
// one profile holding every function. A directory is a shard directory of worker processes
// (process_shards.h): its shards and the parent's report, if it is there, merged into one.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "tscope/core/error.h"
#include "tscope/profile/atomic_file.h"
#include "tscope/profile/json_export.h"
#include "tscope/profile/process_shards.h"
#include "tscope/profile/report_folded.h"
#include "tscope/profile/report_html.h"
#include "tscope/profile/report_text.h"
#include "tscope/profile/trace.h"
#include "validators.h"

namespace tscope::cli {
namespace {

std::string merge_title(const std::vector<std::string>& paths) {
  std::string title = "Merge of";
  for (const std::string& path : paths) title += " " + path;
  return title;
}

std::string joined(const std::vector<std::string>& paths) {
  std::string text;
  for (const std::string& path : paths) text += (text.empty() ? "" : ", ") + path;
  return text;
}

// The HTML page and folded stacks show one profile: the file's only one, or the sum of all
// (the last profile a report of several prints).
template <typename Settings>
void write_views(const std::vector<profile::Profile>& profiles,
                 const Settings& settings,
                 const profile::TextReportOptions& report,
                 const profile::TraceRecord* trace) {
  const profile::Profile all =
      profiles.size() == 1
          ? profiles.front()
          : profile::sum_profiles(profiles, settings.paths.size() == 1
                                                ? "Sum of " + settings.paths.front()
                                                : merge_title(settings.paths));
  if (!settings.html_path.empty()) {
    profile::write_file_atomically(
        settings.html_path,
        profile::render_html(
            all, {.source = joined(settings.paths), .n_chart_rows = report.n_ops, .trace = trace}));
  }
  if (!settings.folded_path.empty()) {
    profile::write_file_atomically(settings.folded_path, profile::render_folded(all));
  }
}

}  // namespace

Action add_report_command(CLI::App& app) {
  struct Settings {
    std::vector<std::string> paths;
    int n_ops = 0;
    int n_apply = 0;
    int n_zones = 0;
    std::string zone_sort;
    bool by_signature = false;
    std::string html_path;
    std::string folded_path;
    std::string trace_path;
  };
  auto settings = std::make_shared<Settings>();
  CLI::App* command = app.add_subcommand(
      "report", "Render profiles saved as JSON; merge several files or a shard directory");
  command
      ->add_option("files", settings->paths,
                   "profile JSON files, or directories of worker shards (profiling.directory)")
      ->required()
      ->check(CLI::ExistingPath);
  command
      ->add_option("--n-ops", settings->n_ops,
                   "rows in the Class and Ops tables (default: as saved)")
      ->check(positive());
  command->add_option("--n-apply", settings->n_apply, "rows in the Apply table (default: as saved)")
      ->check(positive());
  command
      ->add_option("--n-zones", settings->n_zones,
                   "rows in the Host zones table (default: as saved)")
      ->check(positive());
  command
      ->add_option("--zone-sort", settings->zone_sort,
                   "Host zones sort key, tottime or cumtime (default: as saved)")
      ->check(CLI::IsMember({"tottime", "cumtime"}));
  command->add_flag("--by-signature", settings->by_signature,
                    "list every node's time per input signature (dtypes, shapes, strides)");
  command->add_option("--html", settings->html_path,
                      "write the report as one self-contained HTML page here instead of printing "
                      "the text");
  command->add_option("--folded", settings->folded_path,
                      "write folded stacks (flamegraph.pl, speedscope; nanoseconds) here instead "
                      "of printing the text");
  command
      ->add_option("--trace", settings->trace_path,
                   "with --html: also draw this timeline (written by --trace or profiling.trace)")
      ->check(CLI::ExistingFile);
  return [command, settings]() {
    if (!command->parsed()) return -1;
    if (!settings->trace_path.empty() && settings->html_path.empty()) {
      throw_error(ErrorKind::InvalidArgument,
                  "--trace draws a timeline in the HTML report: give "
                  "--html OUT.html too");
    }
    // A bad output path fails before any file is read.
    if (!settings->html_path.empty()) profile::check_output_path(settings->html_path);
    if (!settings->folded_path.empty()) profile::check_output_path(settings->folded_path);
    std::vector<profile::Profile> profiles;
    profile::TextReportOptions report;
    for (std::size_t i = 0; i < settings->paths.size(); ++i) {
      const std::string& path = settings->paths[i];
      profile::ProfileDocument document =
          std::filesystem::is_directory(path)
              ? profile::read_shard_directory(path)
              : profile::parse_profile_json(profile::read_file(path), path);
      if (i == 0) report = document.report;
      for (profile::Profile& saved : document.profiles) profiles.push_back(std::move(saved));
    }
    if (settings->n_ops > 0) report.n_ops = settings->n_ops;
    if (settings->n_apply > 0) report.n_apply = settings->n_apply;
    if (settings->n_zones > 0) report.n_zones = settings->n_zones;
    if (!settings->zone_sort.empty()) {
      report.sort_zones_by_cumtime = settings->zone_sort == "cumtime";
    }
    report.show_signatures = report.show_signatures || settings->by_signature;
    if (!settings->html_path.empty() || !settings->folded_path.empty()) {
      profile::TraceRecord trace;
      if (!settings->trace_path.empty()) {
        trace = profile::parse_chrome_trace(profile::read_file(settings->trace_path),
                                            settings->trace_path);
      }
      write_views(profiles, *settings, report, settings->trace_path.empty() ? nullptr : &trace);
      return 0;
    }
    if (settings->paths.size() == 1) {
      std::cout << (profiles.size() == 1 ? profile::render_text(profiles[0], report)
                                         : profile::render_profiles(profiles, report));
      return 0;
    }
    std::cout << profile::render_text(profile::sum_profiles(profiles, merge_title(settings->paths)),
                                      report);
    return 0;
  };
}

}  // namespace tscope::cli
