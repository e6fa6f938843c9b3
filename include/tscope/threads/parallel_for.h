// SPDX-License-Identifier: Apache-2.0
#pragma once
// Parallel loops for kernels: a flat loop split into contiguous chunks, or a number of parts, run
// on the worker threads that oneDNN's primitives use (thread_count.h), so an elementwise pass
// after a multi-threaded convolution is not the one single-threaded step of the chain. Kernels ask
// for parallelism here; they never start or place threads themselves. Inside a parallel region,
// or at one thread, the chunks run one after another on the caller.
#include <cstdint>

#pragma GCC visibility push(default)

namespace tscope::threads {

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

/// The number of threads a parallel loop may use now: thread_count(), or 1 inside a parallel
/// region (a part of a loop does not start another team).
[[nodiscard]] int parallel_threads();

/// Runs `body(data, index)` for index in [0, parts) spread over at most parallel_threads() worker
/// threads (each index once; the caller runs parts too); serially when either is 1. If a part
/// throws, the parts not yet started are skipped and the first exception is rethrown on the
/// calling thread once every running part has returned.
void run_parts(int parts, void (*body)(void* data, int index), void* data);

/// How many parts a loop over `elements` elements gets now: chunk_count with parallel_threads().
/// Short loops (most nodes) return 1 before asking the runtime for its thread count.
[[nodiscard]] inline int parts_for(std::int64_t elements) {
  return elements < 2 * kMinElementsPerChunk ? 1 : chunk_count(elements, parallel_threads());
}

/// Runs body(begin, end) on the non-empty ranges chunk_range(units, parts, i) of [0, units), on
/// the worker threads when `parts` is above 1: the units (elements, rows, groups of elements)
/// split into parts that the caller sized by the work they hold.
template <class Body>
void for_each_part(std::int64_t units, int parts, const Body& body) {
  if (parts <= 1) {
    body(std::int64_t{0}, units);
    return;
  }
  struct Job {
    const Body* body;
    std::int64_t units;
    int parts;
  } job{&body, units, parts};
  run_parts(
      parts,
      [](void* data, int index) {
        const Job& j = *static_cast<const Job*>(data);
        const ChunkRange range = chunk_range(j.units, j.parts, index);
        if (range.begin < range.end) (*j.body)(range.begin, range.end);
      },
      &job);
}

/// Runs body(begin, end) on every chunk of [0, count), in parallel when the loop is long enough.
/// Chunks are disjoint, so a body that writes only its own range of the output is race-free.
template <class Body>
void for_each_chunk(std::int64_t count, const Body& body) {
  for_each_part(count, parts_for(count), body);
}

}  // namespace tscope::threads

#pragma GCC visibility pop
