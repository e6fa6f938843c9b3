// SPDX-License-Identifier: Apache-2.0
#pragma once
// This process's part in a profiled run with worker processes (worker_processes.h): main or
// worker, the shard directory, its start time. GlobalProfiles drives it from its exit, signal and
// fork handlers; process_shards.cpp reads what it writes.
#include <cstdint>
#include <string>

#include "tscope/profile/profile.h"
#include "tscope/profile/profile_options.h"

namespace tscope::profile::detail {

/// One zone clock read paired with CLOCK_MONOTONIC: the best of a few tries of (monotonic, zone,
/// monotonic), taking the monotonic time halfway between the two reads. Both clocks are read in
/// one process, so the pairing's error is at most half the time between the two monotonic reads.
struct ClockPair {
  std::int64_t monotonic_ns = 0;
  std::int64_t zone_ns = 0;
  std::int64_t half_width_ns = 0;
};
/// Only clock reads: safe in a fork child.
[[nodiscard]] ClockPair pair_clocks() noexcept;

/// Called once, when the global profiles install their handlers. With TSCOPE_PROFILE_PARENT
/// naming another process, this process becomes a worker started by exec (it makes the
/// directory and writes its marker); otherwise it is a main process and exports the variable for
/// the programs it starts.
void start_process_role(const ProfileOptions& options);
/// A main process's shard directory follows its options (set_options).
void update_worker_directory(const ProfileOptions& options);

/// Before fork(), in the parent: makes the shard directory and lays out the child's marker path,
/// so that the child needs only system calls.
void prepare_worker_fork() noexcept;
void after_worker_fork_in_parent() noexcept;
/// In the fork child: this process is now a worker of the same root; writes its marker. Only
/// clock reads and open/write/close.
void become_forked_worker() noexcept;

[[nodiscard]] bool forked_worker() noexcept;
/// The shard directory: the one chosen for this process (worker, or main with workers).
[[nodiscard]] std::string worker_directory();
[[nodiscard]] std::int64_t worker_root_pid() noexcept;
/// Where this worker writes its shard.
[[nodiscard]] std::string own_shard_path();

/// This process's record now (end = now), over `host`, this process's zones only.
[[nodiscard]] ProcessRecord own_process_record(const HostRecord& host);

}  // namespace tscope::profile::detail
