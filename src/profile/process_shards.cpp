// SPDX-License-Identifier: Apache-2.0
// Reading a shard directory (process_shards.h): markers, shards, and their merge into a profile.
#include "tscope/profile/process_shards.h"

#include <dirent.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "tscope/core/error.h"
#include "tscope/profile/atomic_file.h"

namespace tscope::profile {
namespace {

struct DirectoryScan {
  std::map<std::int64_t, std::string> shards;  // pid -> path
  std::map<std::int64_t, WorkerMarker> markers;
  std::vector<std::string> other_json;  // profile files that are not shards
};

bool parse_number(std::string_view text, std::int64_t& value) {
  const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), value);
  return status == std::errc() && end == text.data() + text.size();
}

// "tscope-<root>-<pid><suffix>"
bool parse_worker_file_name(const std::string& name,
                            std::string_view suffix,
                            std::int64_t& root,
                            std::int64_t& pid) {
  constexpr std::string_view kPrefix = "tscope-";
  if (!name.starts_with(kPrefix) || !name.ends_with(suffix)) return false;
  const std::string_view middle =
      std::string_view(name).substr(kPrefix.size(), name.size() - kPrefix.size() - suffix.size());
  const std::size_t dash = middle.find('-');
  return dash != std::string_view::npos && parse_number(middle.substr(0, dash), root) &&
         parse_number(middle.substr(dash + 1), pid);
}

void warn(const std::string& line) { write_all_to_fd(STDERR_FILENO, "tscope: " + line + "\n"); }

DirectoryScan scan_directory(const std::string& directory, std::int64_t root_pid) {
  DirectoryScan scan;
  DIR* listing = ::opendir(directory.c_str());
  if (listing == nullptr) {
    throw_error(ErrorKind::Io, "cannot read the shard directory '{}': {}", directory,
                std::strerror(errno));
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(listing)) names.emplace_back(entry->d_name);
  ::closedir(listing);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string path = directory + "/" + name;
    std::int64_t root = 0, pid = 0;
    if (parse_worker_file_name(name, ".json", root, pid)) {
      if (root_pid < 0 || root == root_pid) scan.shards[pid] = path;
    } else if (parse_worker_file_name(name, ".started", root, pid)) {
      if (root_pid >= 0 && root != root_pid) continue;
      try {
        scan.markers[pid] = parse_worker_marker(read_file(path), path);
      } catch (const Error& error) {
        warn(fmt::format("skipping the worker marker '{}': {}", path, error.message()));
      }
    } else if (name.ends_with(".json")) {
      scan.other_json.push_back(path);
    }
  }
  return scan;
}

// One process's zone clock against CLOCK_MONOTONIC: the straight line through its two pairings
// (at its start and at its end), or a plain offset when it has only one.
class ClockLine {
 public:
  ClockLine() = default;
  explicit ClockLine(const ProcessRecord& process)
      : zone0_(process.start_ns),
        monotonic0_(process.start_monotonic_ns),
        zone1_(process.end_ns),
        monotonic1_(process.end_monotonic_ns) {}

  [[nodiscard]] std::int64_t to_zone(std::int64_t monotonic_ns) const {
    return zone0_ + scaled(monotonic_ns - monotonic0_, zone1_ - zone0_, monotonic1_ - monotonic0_);
  }
  [[nodiscard]] std::int64_t to_monotonic(std::int64_t zone_ns) const {
    return monotonic0_ + scaled(zone_ns - zone0_, monotonic1_ - monotonic0_, zone1_ - zone0_);
  }

 private:
  static std::int64_t scaled(std::int64_t value, std::int64_t numerator, std::int64_t denominator) {
    if (denominator <= 0 || numerator <= 0) return value;
    return static_cast<std::int64_t>(static_cast<long double>(value) * numerator / denominator);
  }
  std::int64_t zone0_ = 0, monotonic0_ = 0, zone1_ = 0, monotonic1_ = 0;
};

// Moves a shard's times onto the reference (main) process's zone clock, through CLOCK_MONOTONIC.
void move_times(HostRecord& host, const ClockLine& own, const ClockLine& reference) {
  const auto convert = [&](std::int64_t& zone_ns) {
    zone_ns = reference.to_zone(own.to_monotonic(zone_ns));
  };
  for (ProcessRecord& process : host.processes) {
    process.start_ns = reference.to_zone(process.start_monotonic_ns);
    if (process.end_ns != 0) process.end_ns = reference.to_zone(process.end_monotonic_ns);
  }
  for (StepRecord& step : host.steps) convert(step.start_ns);
  for (EpochRecord& epoch : host.epochs) {
    convert(epoch.start_ns);
    convert(epoch.end_ns);
  }
}

// Workers listed as running or missing have no threads: they are dropped (and the threads'
// process indices renumbered) so that a fresh look at the directory lists them again.
void drop_unfinished(HostRecord& host) {
  std::vector<std::int64_t> new_index(host.processes.size(), -1);
  std::vector<ProcessRecord> kept;
  for (std::size_t i = 0; i < host.processes.size(); ++i) {
    const std::string& state = host.processes[i].state;
    if (state == "running" || state == "missing") continue;
    new_index[i] = static_cast<std::int64_t>(kept.size());
    kept.push_back(std::move(host.processes[i]));
  }
  host.processes = std::move(kept);
  for (ZoneThreadRecord& thread : host.threads) {
    const auto index = static_cast<std::size_t>(thread.process);
    thread.process = index < new_index.size() && new_index[index] >= 0 ? new_index[index] : 0;
  }
}

// The same zone run by several processes is one site (merge_host_records appends each side's
// sites), so that its calls add up in one row of the report.
void unify_sites(HostRecord& host) {
  std::map<std::tuple<std::string, std::string, std::string, std::int64_t, std::string>,
           std::int64_t>
      index_of;
  std::vector<ZoneSiteRecord> kept;
  std::vector<std::int64_t> new_index;
  for (ZoneSiteRecord& site : host.sites) {
    auto [it, inserted] =
        index_of.try_emplace({site.name, site.function, site.file, site.line, site.kind},
                             static_cast<std::int64_t>(kept.size()));
    if (inserted) kept.push_back(std::move(site));
    new_index.push_back(it->second);
  }
  const auto remap = [&new_index](std::int64_t& site) {
    site = new_index[static_cast<std::size_t>(site)];
  };
  for (ZoneThreadRecord& thread : host.threads) {
    for (ZoneNodeRecord& node : thread.nodes) remap(node.site);
    for (ZoneValueRecord& value : thread.values) remap(value.site);
  }
  for (EpochRecord& epoch : host.epochs) {
    for (ZoneTotals& zone : epoch.zones) remap(zone.site);
  }
  host.sites = std::move(kept);
}

struct MergeState {
  HostRecord* host;
  bool injected;
  bool have_reference;
  ClockLine reference;
  std::int64_t reference_error_ns;
};

// One shard's profiles into the state's host record; its graph functions go to `extra`.
void merge_shard(MergeState& state,
                 std::int64_t pid,
                 std::vector<Profile> shard,
                 std::vector<Profile>& extra) {
  for (Profile& profile : shard) {
    HostRecord shard_host = std::move(profile.host);
    profile.host = HostRecord{};
    if (!shard_host.threads.empty() || !shard_host.processes.empty()) {
      if (shard_host.processes.empty()) shard_host.processes.push_back({.pid = pid});
      const ClockLine own(shard_host.processes.front());
      if (!state.have_reference) {
        state.have_reference = true;
        state.reference = own;
        state.reference_error_ns = 0;
      }
      move_times(shard_host, own, state.reference);
      for (ProcessRecord& process : shard_host.processes) {
        if (process.state == "worker" || process.state.empty()) process.state = "merged";
        // Both pairings err: the worker's, and the main process's that places it.
        if (process.clock_error_ns >= 0) process.clock_error_ns += state.reference_error_ns;
      }
      if (state.host->clock.empty()) state.host->clock = shard_host.clock;
      *state.host = merge_host_records(*state.host, shard_host);
    }
    if (!profile.functions.empty()) extra.push_back(std::move(profile));
  }
}

std::size_t merge_scan(std::vector<Profile>& profiles,
                       const DirectoryScan& scan,
                       const ProcessRecord* main) {
  if (scan.shards.empty() && scan.markers.empty()) return 0;
  if (profiles.empty()) {
    profiles.emplace_back();
    profiles.back().title = "Host zones";
  }
  HostRecord& host = profiles.front().host;
  drop_unfinished(host);
  // The first profile's own threads belong to the process that wrote it, listed first. Without
  // a record of it (a report written before its workers were known), the first shard's clock
  // is the reference.
  bool have_reference = !host.processes.empty();
  if (host.processes.empty() && main != nullptr) {
    host.processes.push_back(*main);
    have_reference = true;
  } else if (host.processes.empty() && !host.threads.empty()) {
    host.processes.push_back({.label = "main", .state = "main"});
  }
  MergeState state{.host = &host,
                   .injected = host.clock == "injected",
                   .have_reference = have_reference,
                   .reference = {},
                   .reference_error_ns = 0};
  if (state.have_reference) {
    state.reference = ClockLine(host.processes.front());
    state.reference_error_ns = std::max<std::int64_t>(host.processes.front().clock_error_ns, 0);
  }
  std::set<std::int64_t> done;
  for (const ProcessRecord& process : host.processes) done.insert(process.pid);
  std::vector<Profile> extra;
  std::size_t found = 0;
  for (const auto& [pid, path] : scan.shards) {
    if (done.contains(pid)) continue;
    try {
      ProfileDocument document = parse_profile_json(read_file(path), path);
      state.injected = state.injected || (host.clock.empty() && !document.profiles.empty() &&
                                          document.profiles.front().host.clock == "injected");
      merge_shard(state, pid, std::move(document.profiles), extra);
      done.insert(pid);
      ++found;
    } catch (const Error& error) {
      warn(fmt::format("skipping the worker shard '{}': {}", path, error.message()));
    }
  }
  for (const auto& [pid, marker] : scan.markers) {
    if (done.contains(pid)) continue;
    const bool shard_unreadable = scan.shards.contains(pid);
    host.processes.push_back(
        {.pid = pid,
         .parent_pid = marker.parent_pid,
         .label = marker.label,
         .state = shard_unreadable ? "missing" : unfinished_worker_state(marker),
         .start_ns = state.injected || !state.have_reference
                         ? marker.start_zone_ns
                         : state.reference.to_zone(marker.start_monotonic_ns),
         .start_monotonic_ns = marker.start_monotonic_ns});
    ++found;
  }
  unify_sites(host);
  for (Profile& profile : extra) profiles.push_back(std::move(profile));
  return found;
}

}  // namespace

std::string worker_marker_name(std::int64_t root_pid, std::int64_t pid) {
  return fmt::format("tscope-{}-{}.started", root_pid, pid);
}

std::string worker_shard_name(std::int64_t root_pid, std::int64_t pid) {
  return fmt::format("tscope-{}-{}.json", root_pid, pid);
}

WorkerMarker parse_worker_marker(const std::string& text, const std::string& source) {
  std::istringstream lines(text);
  std::string line;
  if (!std::getline(lines, line) || line != "tscope-worker-started 1") {
    throw_error(ErrorKind::Parse, "'{}' is not a worker marker (first line '{}')", source, line);
  }
  WorkerMarker marker;
  std::map<std::string, std::int64_t*> numbers = {
      {"pid", &marker.pid},
      {"parent_pid", &marker.parent_pid},
      {"root_pid", &marker.root_pid},
      {"start_zone_ns", &marker.start_zone_ns},
      {"start_monotonic_ns", &marker.start_monotonic_ns},
      {"start_boot_ns", &marker.start_boot_ns}};
  while (std::getline(lines, line)) {
    const std::size_t space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    if (key == "label") {
      marker.label = value;
    } else if (auto it = numbers.find(key); it != numbers.end()) {
      if (!parse_number(value, *it->second)) {
        throw_error(ErrorKind::Parse, "'{}': '{}' is not a number in line '{}'", source, value,
                    line);
      }
    }
  }
  if (marker.pid <= 0) throw_error(ErrorKind::Parse, "'{}' names no pid", source);
  return marker;
}

std::string unfinished_worker_state(const WorkerMarker& marker) {
  const auto pid = static_cast<pid_t>(marker.pid);
  if (::kill(pid, 0) != 0 && errno == ESRCH) return "missing";
  // A zombie has ended (its parent has not collected it yet), and a process started after the
  // marker was written has taken over a dead worker's pid.
  std::ifstream stat_file(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(stat_file, stat)) return "running";  // not readable here: trust kill()
  const std::size_t name_end = stat.rfind(')');
  if (name_end == std::string::npos) return "running";
  std::istringstream fields(stat.substr(name_end + 1));
  std::string state;
  fields >> state;
  if (state == "Z" || state == "X") return "missing";
  std::string field;
  for (int i = 0; i < 18 && fields >> field; ++i) {
  }
  std::int64_t start_ticks = 0;
  const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  if (fields >> start_ticks && ticks_per_second > 0 && marker.start_boot_ns > 0) {
    const std::int64_t tick_ns = 1'000'000'000 / ticks_per_second;
    if (start_ticks * tick_ns > marker.start_boot_ns + 2 * tick_ns) return "missing";
  }
  return "running";
}

std::size_t merge_worker_shards(std::vector<Profile>& profiles,
                                const std::string& directory,
                                std::int64_t root_pid,
                                const ProcessRecord& main) {
  if (::access(directory.c_str(), R_OK | X_OK) != 0) return 0;  // no worker made it
  return merge_scan(profiles, scan_directory(directory, root_pid), &main);
}

ProfileDocument read_shard_directory(const std::string& directory) {
  const DirectoryScan all = scan_directory(directory, -1);
  ProfileDocument result;
  bool first = true;
  for (const std::string& path : all.other_json) {
    try {
      ProfileDocument document = parse_profile_json(read_file(path), path);
      if (first) result.report = document.report;
      first = false;
      for (Profile& profile : document.profiles) result.profiles.push_back(std::move(profile));
    } catch (const Error& error) {
      warn(fmt::format("skipping '{}': {}", path, error.message()));
    }
  }
  if (result.profiles.empty() && all.shards.empty() && all.markers.empty()) {
    throw_error(ErrorKind::InvalidArgument,
                "'{}' holds no profile, worker shard (tscope-*.json) or worker marker", directory);
  }
  // The parent's report lists itself first: only its own workers belong with it.
  std::int64_t root_pid = -1;
  if (!result.profiles.empty()) {
    const std::vector<ProcessRecord>& listed = result.profiles.front().host.processes;
    if (!listed.empty() && listed.front().state == "main") root_pid = listed.front().pid;
  }
  if (root_pid < 0) {
    (void)merge_scan(result.profiles, all, nullptr);
  } else {
    (void)merge_scan(result.profiles, scan_directory(directory, root_pid), nullptr);
  }
  if (first) {
    // Only shards: their report options are the first shard's.
    for (const auto& [pid, path] : all.shards) {
      try {
        result.report = parse_profile_json(read_file(path), path).report;
        break;
      } catch (const Error&) {
        continue;
      }
    }
  }
  return result;
}

}  // namespace tscope::profile
