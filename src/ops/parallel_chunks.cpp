// SPDX-License-Identifier: Apache-2.0
#include "tscope/ops/parallel_chunks.h"

#include <dlfcn.h>
#include <sched.h>

#include <algorithm>

#include "tscope/ops/cpu_placement.h"

namespace tscope::ops::detail {
namespace {
// libgomp's entry points. GOMP_parallel is the call GCC emits for `#pragma omp parallel` (its ABI
// since GCC 4.9): it runs fn(data) on every thread of a new team, the caller included.
using GompParallel = void (*)(void (*fn)(void*), void* data, unsigned threads, unsigned flags);
using IntQuery = int (*)();

struct OpenMpRuntime {
  GompParallel parallel = nullptr;
  IntQuery max_threads = nullptr;
  IntQuery in_parallel = nullptr;
  IntQuery thread_num = nullptr;
  IntQuery num_threads = nullptr;
  void (*set_num_threads)(int) = nullptr;

  [[nodiscard]] bool usable() const {
    return parallel != nullptr && max_threads != nullptr && in_parallel != nullptr &&
           thread_num != nullptr && num_threads != nullptr;
  }
};

template <class Fn>
Fn find(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

const OpenMpRuntime& runtime() {
  static const OpenMpRuntime found{
      find<GompParallel>("GOMP_parallel"),   find<IntQuery>("omp_get_max_threads"),
      find<IntQuery>("omp_in_parallel"),     find<IntQuery>("omp_get_thread_num"),
      find<IntQuery>("omp_get_num_threads"), find<void (*)(int)>("omp_set_num_threads")};
  return found;
}

struct Team {
  void (*body)(void*, int);
  void* data;
  int parts;
  // The CPU the calling thread ran on when it started the team (-1 if unknown).
  int caller_cpu;
};

// The team may be smaller than asked for (OMP_THREAD_LIMIT, nested regions), so each thread takes
// every team-size-th part: all parts run whatever the team size.
// A worker that finds itself on the caller's CPU moves off it first (cpu_placement.h): left there,
// it would run its parts only when the caller stops, and would stay there for later teams.
void run_team_member(void* data) {
  const Team& team = *static_cast<const Team*>(data);
  const OpenMpRuntime& omp = runtime();
  const int size = std::max(omp.num_threads(), 1);
  const int member = omp.thread_num();
  if (member != 0 && team.caller_cpu >= 0 && sched_getcpu() == team.caller_cpu) {
    (void)move_thread_off_cpu(team.caller_cpu);
  }
  for (int index = member; index < team.parts; index += size) team.body(team.data, index);
}
}  // namespace

OneThreadScope::OneThreadScope() noexcept {
  const OpenMpRuntime& omp = runtime();
  if (omp.set_num_threads == nullptr || omp.max_threads == nullptr) return;
  const int threads = omp.max_threads();
  if (threads <= 1) return;
  previous_ = threads;
  omp.set_num_threads(1);
}

OneThreadScope::~OneThreadScope() {
  if (previous_ > 0) runtime().set_num_threads(previous_);
}

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
  const OpenMpRuntime& omp = runtime();
  if (!omp.usable() || omp.in_parallel() != 0) return 1;
  return std::max(omp.max_threads(), 1);
}

void run_parts(int parts, void (*body)(void* data, int index), void* data) {
  const OpenMpRuntime& omp = runtime();
  if (parts <= 1 || !omp.usable()) {
    for (int index = 0; index < parts; ++index) body(data, index);
    return;
  }
  Team team{body, data, parts, sched_getcpu()};
  omp.parallel(run_team_member, &team, static_cast<unsigned>(parts), 0);
}

}  // namespace tscope::ops::detail
