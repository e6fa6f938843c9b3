// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The shard directory of worker processes (worker_processes.h) and how its files merge into a
/// profile. A worker with pid P whose profile is merged into the one of process R leaves:
///
///   tscope-R-P.started   its marker, written when it became a worker ("key value" lines)
///   tscope-R-P.json      its shard, a profile JSON file (json_export.h), written at its end
///
/// A marker without a shard is a worker that is still running, or that died without writing it
/// (SIGKILL, a crash): "running" while a process with that pid, started no later than the
/// marker, is alive and not a zombie, else "missing".
#include <cstdint>
#include <string>
#include <vector>

#include "tscope/profile/json_export.h"
#include "tscope/profile/profile.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

/// What a worker's marker says.
struct WorkerMarker {
  std::int64_t pid = 0;
  std::int64_t parent_pid = 0;
  std::int64_t root_pid = 0;  ///< the process whose profile merges this worker's shard
  std::string label;          ///< "fork" or "exec"
  std::int64_t start_zone_ns = 0;
  std::int64_t start_monotonic_ns = 0;  ///< CLOCK_MONOTONIC
  std::int64_t start_boot_ns = 0;       ///< CLOCK_BOOTTIME, to tell a reused pid
};

[[nodiscard]] std::string worker_marker_name(std::int64_t root_pid, std::int64_t pid);
[[nodiscard]] std::string worker_shard_name(std::int64_t root_pid, std::int64_t pid);

/// Parses a marker's text; Error(Parse) naming `source` when a field is missing or malformed.
[[nodiscard]] WorkerMarker parse_worker_marker(const std::string& text, const std::string& source);

/// "running" or "missing" for a worker with a marker and no shard (see above).
[[nodiscard]] std::string unfinished_worker_state(const WorkerMarker& marker);

/// Merges into `profiles` the shards in `directory` of the workers of `root_pid` (every worker
/// when negative), and lists the workers with a marker and no shard as running or missing. The
/// zones of each shard join the first profile's host record, its processes after those already
/// listed (a worker listed as merged there is not merged again); a shard's graph functions are
/// appended as profiles of their own. Shard times move to the clock of the first listed process.
/// When the host record lists no process yet, `main` is listed first (the caller's own process).
/// Does nothing when the directory holds nothing of `root_pid`. A shard that cannot be read is
/// reported on stderr and its worker listed as missing. Returns the number of workers found.
std::size_t merge_worker_shards(std::vector<Profile>& profiles,
                                const std::string& directory,
                                std::int64_t root_pid,
                                const ProcessRecord& main);

/// `tscope report DIR`: the profile JSON files in `directory` that are not shards (the parent's
/// report, when it was written there), with every shard and marker merged into them, or into one
/// profile titled "Host zones" when there is none. Throws Error(Io) when the directory cannot be
/// read, Error(InvalidArgument) when it holds no profile, shard or marker.
[[nodiscard]] ProfileDocument read_shard_directory(const std::string& directory);

}  // namespace tscope::profile

#pragma GCC visibility pop
