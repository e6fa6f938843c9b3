// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Profiler settings, as a struct for code and as the TSCOPE_FLAGS environment variable:
///
///   TSCOPE_FLAGS="profile=true,profile_memory=true,profiling.n_apply=30,profiling.destination=p.json"
///
/// parse_flags() is the one parser; process_flags() is the only code that reads the environment.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#pragma GCC visibility push(default)

namespace tscope::profile {

struct ProfileOptions {
  bool profile = false;                 ///< profile every compiled function, print all at exit
  bool profile_memory = false;          ///< memory section and per-apply input/output lines
  bool profile_optimizer = false;       ///< keep the rewriter report in the profile
  bool allow_gc = true;                 ///< default of FunctionOptions::allow_gc
  int n_apply = 20;                     ///< rows of the Apply table and the memory list (> 0)
  int n_ops = 20;                       ///< rows of the Class and Ops tables (> 0)
  std::int64_t min_memory_size = 1024;  ///< memory list cut-off in bytes (>= 0)
  /// "stderr", "stdout" or a file path; a path ending in ".json" receives the JSON export.
  std::string destination = "stderr";
  bool ignore_first_call = false;  ///< drop the first call's timings (warm-up)
  int output_line_width = 512;     ///< maximum line width; drives name truncation (> 0)
  bool min_peak_memory = false;    ///< search the minimum peak over all valid node orders
  int n_zones = 20;                ///< rows of the Host zones table (> 0)
  bool zones_by_cumtime = false;   ///< profiling.zone_sort=cumtime: sort zones by cumtime
  /// profiling.trace: with profile on, record a timeline and write it here (trace.h); empty: none.
  std::string trace;
  /// profiling.trace_buffer_mb: each thread's timeline ring, in bytes.
  std::int64_t trace_buffer_bytes = std::int64_t{8} << 20;
  /// Also write the HTML report (report_html.h) here at exit; empty: none.
  std::string html;
  /// Also write folded stacks (report_folded.h) here at exit; empty: none.
  std::string folded;
  /// profiling.directory: where worker processes write their shards (worker_processes.h);
  /// empty: "<destination>.workers" for a file destination, else /tmp/tscope-workers-<pid>.
  std::string directory;
};

/// Parses a comma-separated list of name=value pairs on top of the defaults. Throws
/// Error(BadFlag) naming the flag and the valid names or values on an unknown name, a missing
/// '=', or a bad value.
[[nodiscard]] ProfileOptions parse_flags(std::string_view text);

/// With `profile` on, checks that the destination file and the html, folded and timeline files
/// (when set) can be written (check_output_path), so that a bad path stops the program when the
/// flags are read, not at exit when the profile is lost. Throws Error(BadFlag) naming the flag,
/// the path and the problem.
void check_destination(const ProfileOptions& options);

/// The flags of this process: TSCOPE_FLAGS parsed once, on first use, and the destination
/// checked (check_destination). Throws like parse_flags and check_destination.
[[nodiscard]] const ProfileOptions& process_flags();

/// TSCOPE_PROFILE_PARENT="<pid>:<directory>": set by a profiled process for the programs it
/// starts, so that one of them that uses tscope with profiling on, started by exec, writes its
/// zones as a worker shard into the directory (worker_processes.h).
struct WorkerParent {
  std::int64_t pid = 0;
  std::string directory;  ///< absolute
};

/// The variable as this process found it, read once on first use; nullopt when unset. A value
/// that does not parse is reported on stderr once and treated as unset.
[[nodiscard]] const std::optional<WorkerParent>& inherited_worker_parent();

/// Sets the variable in this process's environment, for the processes it starts from now on.
/// Reads the inherited value first, so that this process still sees what it was started with.
void export_worker_parent(const WorkerParent& parent);

}  // namespace tscope::profile

#pragma GCC visibility pop
