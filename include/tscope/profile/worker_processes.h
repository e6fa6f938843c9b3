// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Worker processes of a profiled program. While profiling is on (TSCOPE_FLAGS=profile=true, or
/// a profiled function registered with the global profiles), every child made by fork() becomes a
/// *worker*: it forgets the zones it inherited, records its own, and at exit (exit(), SIGINT,
/// SIGTERM, an uncaught exception) writes them as a *shard* into the shard directory
/// (profiling.directory) instead of the parent's report. A program using tscope started by exec
/// from a profiled process becomes a worker the same way, through TSCOPE_PROFILE_PARENT. The
/// parent merges the shards of its workers into its own profile when it writes it, and
/// `tscope report DIR` merges a directory afterwards; a worker that started and left no shard is
/// reported as missing. docs/host_profiling.md, "Worker processes", is the reference.
///
///   if (::fork() == 0) {
///     run_worker();                           // zone-instrumented code
///     tscope::profile::end_worker_process(0); // writes the shard, then _exit(0)
///   }

#pragma GCC visibility push(default)

namespace tscope::profile {

/// Whether this process is a profiled worker: it writes a shard, never the parent's report.
[[nodiscard]] bool is_worker_process() noexcept;

/// Ends the calling process with _exit(status), after writing its shard when it is a profiled
/// worker. For workers that end with _exit, which runs no exit handler (and flushes no stdio
/// buffer inherited from the parent). Any process may call it: without profiling it is _exit.
/// A shard that cannot be written is reported on stderr and turns status 0 into 3, as at exit.
[[noreturn]] void end_worker_process(int status) noexcept;

}  // namespace tscope::profile

#pragma GCC visibility pop
