// SPDX-License-Identifier: Apache-2.0
// `tscope diff BEFORE AFTER`: compare two saved profiles (profile_diff.h) and print the
// comparison; `--fail-if-slower [PCT]` turns it into a gate that exits kDiffSlowerExitCode. A side
// may be a directory of repeated runs of one job (repeated_runs.h).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "tscope/core/error.h"
#include "tscope/profile/atomic_file.h"
#include "tscope/profile/json_export.h"
#include "tscope/profile/profile_diff.h"
#include "tscope/profile/repeated_runs.h"
#include "tscope/profile/report_diff.h"
#include "validators.h"

namespace tscope::cli {
namespace {
// Every profile of a saved document as one (a file written at exit may hold several).
profile::Profile read_profile(const std::string& path) {
  profile::ProfileDocument document = profile::parse_profile_json(profile::read_file(path), path);
  if (document.profiles.size() == 1) return std::move(document.profiles.front());
  return profile::sum_profiles(document.profiles, "Sum of " + path);
}

struct Side {
  profile::Profile profile;
  std::string source;  // the header's name for it: the path, and the runs of a directory
};

// A file, or a directory whose *.json files are repeated runs of one job, merged.
Side read_side(const std::string& path) {
  if (!std::filesystem::is_directory(path)) return {read_profile(path), path};
  std::vector<std::string> files;
  for (const std::filesystem::directory_entry& entry : std::filesystem::directory_iterator(path)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      files.push_back(entry.path().string());
    }
  }
  if (files.empty()) {
    throw_error(
        ErrorKind::InvalidArgument,
        "'{}' holds no .json profile: a directory on a side of `tscope diff` holds repeated "
        "runs of one job, one profile file per run",
        path);
  }
  std::ranges::sort(files);
  std::vector<profile::Profile> runs;
  for (const std::string& file : files) runs.push_back(read_profile(file));
  const std::string source =
      fmt::format("{} ({} run{})", path, files.size(), files.size() == 1 ? "" : "s");
  return {profile::merge_repeated_runs(runs, files, source), source};
}
}  // namespace

Action add_diff_command(CLI::App& app) {
  struct Settings {
    std::string before_path;
    std::string after_path;
    double slower_percent = profile::kDefaultSlowerPercent;
    double min_share_percent = profile::kDefaultMinSharePercent;
    int n_rows = 20;
    std::string json_path;
    std::string html_path;
  };
  auto settings = std::make_shared<Settings>();
  CLI::App* command = app.add_subcommand(
      "diff", "Compare two profiles saved as JSON: functions, Class, Ops and Apply rows, memory");
  command
      ->add_option("before", settings->before_path,
                   "the baseline profile JSON, or a directory of repeated runs (one JSON each)")
      ->required()
      ->check(CLI::ExistingPath);
  command
      ->add_option("after", settings->after_path,
                   "the profile JSON to compare with it, or a directory of repeated runs")
      ->required()
      ->check(CLI::ExistingPath);
  CLI::Option* gate =
      command
          ->add_option("--fail-if-slower", settings->slower_percent,
                       "exit 7 when the total or a row above --min-share got slower by more than "
                       "PCT percent in both mean and fastest call per call (default PCT: 10)")
          ->expected(0, 1)
          ->default_str("10")
          ->check(positive());
  command
      ->add_option("--min-share", settings->min_share_percent,
                   "rows holding less than this percentage of the steady node time never count "
                   "as slower (default: 1)")
      ->check(non_negative());
  command->add_option("--n-rows", settings->n_rows, "rows in each table (default: 20)")
      ->check(positive());
  command->add_option("--json", settings->json_path, "also write the comparison as JSON here");
  command->add_option("--html", settings->html_path,
                      "also write the comparison as one self-contained HTML page here");
  return [command, settings, gate]() {
    if (!command->parsed()) return -1;
    // A bad output path fails before anything is printed.
    if (!settings->html_path.empty()) profile::check_output_path(settings->html_path);
    const Side before = read_side(settings->before_path);
    const Side after = read_side(settings->after_path);
    const profile::ProfileDiff diff =
        profile::diff_profiles(before.profile, after.profile,
                               {.slower_percent = settings->slower_percent,
                                .min_share_percent = settings->min_share_percent},
                               before.source, after.source);
    std::cout << profile::render_diff_text(diff, {.n_rows = settings->n_rows});
    if (!settings->json_path.empty()) {
      profile::write_file_atomically(settings->json_path, profile::render_diff_json(diff));
    }
    if (!settings->html_path.empty()) {
      profile::write_file_atomically(settings->html_path,
                                     profile::render_diff_html(diff, {.n_rows = settings->n_rows}));
    }
    return gate->count() > 0 && diff.gate_failed ? kDiffSlowerExitCode : 0;
  };
}

}  // namespace tscope::cli
