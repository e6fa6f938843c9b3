// SPDX-License-Identifier: Apache-2.0
#pragma once
// Splits a flat loop of a kernel into contiguous chunks run on the OpenMP threads that oneDNN
// already uses, so an elementwise pass after a multi-threaded convolution is not the one
// single-threaded step of the chain (MobileNet-v2's ReLU6 clamps after plain convolutions took 13%
// of a 2-thread inference before). The runtime is the one oneDNN's library loads (libgomp on
// Debian), found at run time like the CLI finds omp_set_num_threads: no compiler OpenMP support
// is needed (clang pairs -fopenmp with another runtime), and no second thread pool competes for
// the cores. Without that runtime, or inside a parallel region, chunks run one after another.
#include <cstdint>

namespace tscope::ops::detail {

/// Below this many elements a loop runs on one thread: waking the team costs about a microsecond,
/// what a single thread needs for some 4000 elements of a memory-bound pass.
inline constexpr std::int64_t kMinElementsPerChunk = 16384;

/// Chunk boundaries are multiples of this many elements (64 bytes of float32), so no two threads
/// write the same cache line.
inline constexpr std::int64_t kChunkAlignment = 16;

struct ChunkRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

/// How many chunks a loop of `count` elements gets with `threads` threads: at most one per thread
/// and each at least kMinElementsPerChunk long (1 when the loop is short).
[[nodiscard]] int chunk_count(std::int64_t count, int threads);

/// Chunk `index` of `parts` over [0, count): the chunks tile the range in order, every boundary
/// but `count` a multiple of kChunkAlignment, lengths differing by at most one alignment unit.
[[nodiscard]] ChunkRange chunk_range(std::int64_t count, int parts, int index);

/// The number of threads a parallel loop may use now: the OpenMP runtime's setting
/// (omp_get_max_threads, what `--threads` sets), 1 inside a parallel region or without a runtime.
[[nodiscard]] int parallel_threads();

/// While alive, OpenMP regions this thread starts (oneDNN's included) run on this thread alone:
/// for work too small to repay waking the team, whose woken threads would then spin beside the
/// caller's next node. Other threads' settings are untouched.
class OneThreadScope {
 public:
  OneThreadScope() noexcept;
  ~OneThreadScope();
  OneThreadScope(const OneThreadScope&) = delete;
  OneThreadScope& operator=(const OneThreadScope&) = delete;

 private:
  int previous_ = 0;  // the thread count to restore; 0: nothing was changed
};

/// Runs `body(data, index)` for index in [0, parts) spread over the OpenMP team (each index once);
/// serially when parts is 1 or there is no runtime. Callers go through for_each_chunk.
void run_parts(int parts, void (*body)(void* data, int index), void* data);

/// Runs body(begin, end) on every chunk of [0, count), in parallel when the loop is long enough.
/// Chunks are disjoint, so a body that writes only its own range of the output is race-free.
template <class Body>
void for_each_chunk(std::int64_t count, const Body& body) {
  // Short loops (most nodes) return before asking the runtime for its thread count.
  const int parts = count < 2 * kMinElementsPerChunk ? 1 : chunk_count(count, parallel_threads());
  if (parts <= 1) {
    body(std::int64_t{0}, count);
    return;
  }
  struct Job {
    const Body* body;
    std::int64_t count;
    int parts;
  } job{&body, count, parts};
  run_parts(parts, [](void* data, int index) {
    const Job& j = *static_cast<const Job*>(data);
    const ChunkRange range = chunk_range(j.count, j.parts, index);
    (*j.body)(range.begin, range.end);
  }, &job);
}

}  // namespace tscope::ops::detail
