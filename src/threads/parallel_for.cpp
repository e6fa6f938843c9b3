// SPDX-License-Identifier: Apache-2.0
#include "tscope/threads/parallel_for.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <exception>

#include "openmp_runtime.h"
#include "tscope/threads/cpu_placement.h"

namespace tscope::threads {
namespace {
struct Team {
  void (*body)(void*, int);
  void* data;
  int parts;
  // The CPU the calling thread ran on when it started the team (-1 if unknown).
  int caller_cpu;
  // The first part's exception wins the flag and is kept; the others are dropped.
  std::atomic<bool> failed{false};
  std::exception_ptr error;
};

// The team may be smaller than asked for (OMP_THREAD_LIMIT, nested regions), so each thread takes
// every team-size-th part: all parts run whatever the team size.
// A worker that finds itself on the caller's CPU moves off it first (cpu_placement.h): left there,
// it would run its parts only when the caller stops, and would stay there for later teams.
// An exception must not leave an OpenMP thread (the runtime would terminate the process), so it is
// caught here and rethrown by run_parts on the calling thread.
void run_team_member(void* data) {
  Team& team = *static_cast<Team*>(data);
  const int size = std::max(omp_get_num_threads(), 1);
  const int member = omp_get_thread_num();
  if (member != 0 && team.caller_cpu >= 0 && sched_getcpu() == team.caller_cpu) {
    (void)move_thread_off_cpu(team.caller_cpu);
  }
  for (int index = member; index < team.parts; index += size) {
    if (team.failed.load(std::memory_order_relaxed)) return;
    try {
      team.body(team.data, index);
    } catch (...) {
      if (!team.failed.exchange(true, std::memory_order_acq_rel)) {
        team.error = std::current_exception();
      }
      return;
    }
  }
}
}  // namespace

int chunk_count(std::int64_t count, int threads) {
  if (threads <= 1 || count < 2 * kMinElementsPerChunk) return 1;
  return static_cast<int>(std::min<std::int64_t>(threads, count / kMinElementsPerChunk));
}

ChunkRange chunk_range(std::int64_t count, int parts, int index) {
  const std::int64_t units = (count + kChunkAlignment - 1) / kChunkAlignment;
  const std::int64_t base = units / parts;
  const std::int64_t extra = units % parts;
  // The last `extra` chunks get one unit more: the last chunk is the one a partial unit shortens.
  const std::int64_t first_long = parts - extra;
  const auto start_unit = [&](std::int64_t i) {
    return i * base + std::max<std::int64_t>(0, i - first_long);
  };
  return {std::min(start_unit(index) * kChunkAlignment, count),
          std::min(start_unit(index + 1) * kChunkAlignment, count)};
}

int parallel_threads() {
  if (omp_in_parallel() != 0) return 1;
  return std::max(omp_get_max_threads(), 1);
}

void run_parts(int parts, void (*body)(void* data, int index), void* data) {
  // Never more threads than the count allows (a SerialScope, a part of another loop), whatever
  // the number of parts: the team's members take the parts in turn.
  const int threads = std::min(parts, parallel_threads());
  if (threads <= 1) {
    for (int index = 0; index < parts; ++index) body(data, index);
    return;
  }
  Team team{body, data, parts, sched_getcpu()};
  // The region joins every member before it returns, so `team` outlives all of them.
  GOMP_parallel(run_team_member, &team, static_cast<unsigned>(threads), 0);
  if (team.error) std::rethrow_exception(team.error);
}

}  // namespace tscope::threads
