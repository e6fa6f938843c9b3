// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The process-wide list of profiles (global flag `profile=true`). Printed to
/// profiling.destination at exit, costliest first, followed by their sum when several were
/// printed; also written when the process receives SIGINT or SIGTERM and when a profiled call
/// throws. With profiling.trace, the timeline (trace.h) is written at the same moments. A file
/// destination is replaced atomically (temp file + rename); a path ending in ".json" receives the
/// JSON export instead of the text.
///
/// Exit: the writer runs from an atexit handler, during static destruction. Everything it reaches
/// (the registry, the flags, the op registry, the tick source, the tip and dtype tables) is either
/// constant data or leaked on purpose, never a static object that may already be destroyed;
/// scripts/check_repository rejects new function-local statics with destructors.
///
/// Signals: the handler only writes the signal number into a pipe (async-signal-safe). A
/// watcher thread, started with the handlers, reads it, writes the profiles from ordinary
/// thread context (allocating, locking, file I/O are all allowed there), then restores the
/// previous disposition of that signal and raises it again, so the process ends as it would
/// have without the profiler (exit status "killed by SIGINT"), or the user's own handler runs.
///
/// Worker processes (worker_processes.h): once the handlers are installed, a fork child becomes a
/// worker (the fork handlers give it a pipe and watcher of its own) and an exec'd program that
/// finds TSCOPE_PROFILE_PARENT becomes one too; a worker's writes go to its shard, and a main
/// process merges its workers' shards into what it writes.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tscope/profile/profile.h"
#include "tscope/profile/profile_collector.h"
#include "tscope/profile/profile_options.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

class GlobalProfiles {
 public:
  /// The registry; never destroyed, so exit handlers and the watcher thread can use it safely.
  static GlobalProfiles& instance();

  /// Counts a finished (or failed) profiled call; lets the exit handler skip a second identical
  /// write after a write on failure.
  static void note_call() noexcept;

  /// Registers a collector (once); the first registration installs the exit and signal handlers.
  void add(const std::shared_ptr<ProfileCollector>& collector);
  /// Host zones are on by the profile flag (zones.h): installs the exit and signal handlers even
  /// when no graph function is profiled, and adds the zones to what is written.
  void enable_host_zones();
  /// For a program that renders its own report (`tscope profile`): zones record and the children
  /// it forks from now on are workers writing shards, as with the profile flag, but this process
  /// writes no report of its own at exit. merge_worker_shards_into() adds the shards.
  void collect_without_exit_report();
  /// The shards that this process's workers left so far, merged into `profiles` as the exit
  /// writer merges them (the first profile's host record should hold this process's zones).
  void merge_worker_shards_into(std::vector<Profile>& profiles) const;
  /// Forgets every registered collector (tests); the handlers stay installed and then find
  /// nothing to write.
  void clear();
  /// Replaces the options (destination, table sizes); default: process_flags().
  void set_options(const ProfileOptions& options);
  [[nodiscard]] ProfileOptions options() const;

  /// Snapshots of the registered profiles that ran (a call, or compile time over 1 s),
  /// costliest (compile + call time) first. When the program recorded zones of its own
  /// (zones.h), they are attached to the first (or to a profile of their own, titled
  /// "Host zones", when no function ran).
  [[nodiscard]] std::vector<Profile> printable_profiles() const;
  /// Writes the profiles to the destination. Throws Error(Io) when a file cannot be written.
  void write();
  /// write() when anything is registered, swallowing errors into a line on stderr (used from
  /// exit, signal and failure paths, which must not throw). Returns false when the profile could
  /// not be written; the exit handler then ends the process with exit code 3 (ErrorKind::Io).
  bool write_if_active() noexcept;

 private:
  GlobalProfiles() = default;
  void install_handlers();
  /// fork() handlers (pthread_atfork): the child becomes a worker (worker_processes.h).
  static void prepare_fork() noexcept;
  static void after_fork_in_parent() noexcept;
  static void after_fork_in_child() noexcept;
  /// A worker's write: its zones and graph profiles, as a shard in the shard directory.
  void write_shard(std::vector<Profile> profiles, const ProfileOptions& settings);
  /// A main process's write: the shards its workers left, merged into `profiles`.
  void attach_worker_shards(std::vector<Profile>& profiles) const;
  /// Turns the timeline on when the options ask for one (profiling.trace); under mutex_.
  void start_tracing_if_asked();

  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<ProfileCollector>> collectors_;
  std::size_t first_worker_collector_ = 0;  // a fork child's: those it registered itself
  ProfileOptions options_ = process_flags();
  bool handlers_installed_ = false;
  bool host_zones_ = false;
  bool own_report_at_exit_ = true;            // false: collect_without_exit_report
  std::int64_t activity_at_last_write_ = -1;  // calls plus zone records
  std::mutex write_mutex_;
};

/// Title of the summed profile printed after several ("Sum of all(N) printed profiles at exit").
[[nodiscard]] std::string sum_title(std::size_t count);

}  // namespace tscope::profile

#pragma GCC visibility pop
