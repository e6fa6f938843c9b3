// SPDX-License-Identifier: Apache-2.0
// The parallel loops: the chunking itself (tiling, alignment, one chunk per thread), that chunks
// and parts really run on several threads, that a SerialScope keeps them on the caller, and that
// a part's exception reaches the caller instead of ending the process.
#include "tscope/threads/parallel_for.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "tscope/threads/thread_count.h"

namespace tscope {
namespace {
using threads::chunk_count;
using threads::chunk_range;
using threads::ChunkRange;
using threads::for_each_chunk;
using threads::for_each_part;
using threads::kChunkAlignment;
using threads::kMinElementsPerChunk;
using threads::parallel_threads;
using threads::parts_for;

TEST(ParallelFor, ChunksTileTheRangeOnAlignedBoundaries) {
  for (std::int64_t count : {std::int64_t{1}, std::int64_t{15}, std::int64_t{16},
                             std::int64_t{1000}, std::int64_t{70001}, std::int64_t{65536}}) {
    for (int parts = 1; parts <= 5; ++parts) {
      std::int64_t expected_begin = 0;
      std::int64_t shortest = count;
      std::int64_t longest = 0;
      for (int index = 0; index < parts; ++index) {
        const ChunkRange range = chunk_range(count, parts, index);
        EXPECT_EQ(range.begin, expected_begin)
            << count << " elements, chunk " << index << "/" << parts;
        EXPECT_LE(range.begin, range.end);
        if (range.end != count) {
          EXPECT_EQ(range.end % kChunkAlignment, 0);
        }
        shortest = std::min(shortest, range.end - range.begin);
        longest = std::max(longest, range.end - range.begin);
        expected_begin = range.end;
      }
      EXPECT_EQ(expected_begin, count) << count << " elements in " << parts << " chunks";
      if (count >= parts * kChunkAlignment) {
        EXPECT_LE(longest - shortest, kChunkAlignment);
      }
    }
  }
}

TEST(ParallelFor, OneChunkPerThreadAndNoneShorterThanTheMinimum) {
  EXPECT_EQ(chunk_count(10 * kMinElementsPerChunk, 1), 1);
  EXPECT_EQ(chunk_count(2 * kMinElementsPerChunk - 1, 8), 1);
  EXPECT_EQ(chunk_count(2 * kMinElementsPerChunk, 8), 2);
  EXPECT_EQ(chunk_count(5 * kMinElementsPerChunk / 2, 4), 2);
  EXPECT_EQ(chunk_count(100 * kMinElementsPerChunk, 3), 3);
}

TEST(ParallelFor, LongLoopsRunOnSeveralThreadsShortOnesOnTheCaller) {
  const threads::ScopedThreadCount two_threads(2);
  ASSERT_EQ(parallel_threads(), 2);
  std::mutex mutex;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  std::set<std::thread::id> threads;
  const auto record = [&](std::int64_t begin, std::int64_t end) {
    const std::lock_guard<std::mutex> lock(mutex);
    ranges.emplace_back(begin, end);
    threads.insert(std::this_thread::get_id());
  };
  const std::int64_t count = 4 * kMinElementsPerChunk + 3;
  for_each_chunk(count, record);
  std::sort(ranges.begin(), ranges.end());
  ASSERT_EQ(ranges.size(), 2U);
  EXPECT_EQ(ranges[0].first, 0);
  EXPECT_EQ(ranges[0].second, ranges[1].first);
  EXPECT_EQ(ranges[1].second, count);
  EXPECT_EQ(threads.size(), 2U);

  ranges.clear();
  threads.clear();
  for_each_chunk(kMinElementsPerChunk, record);
  ASSERT_EQ(ranges.size(), 1U);
  EXPECT_EQ(ranges[0], std::make_pair(std::int64_t{0}, kMinElementsPerChunk));
  EXPECT_EQ(*threads.begin(), std::this_thread::get_id());
}

// parts_for decides as chunk_count does for the current thread count, and for_each_part covers
// its units once in order, skipping the empty ranges that few units in many parts leave (three
// rows in two parts: alignment gives all three to the first).
TEST(ParallelFor, PartsCoverTheUnitsOnceAndSkipEmptyRanges) {
  const threads::ScopedThreadCount two_threads(2);
  EXPECT_EQ(parts_for(2 * kMinElementsPerChunk - 1), 1);
  EXPECT_EQ(parts_for(4 * kMinElementsPerChunk), 2);
  std::mutex mutex;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  const auto record = [&](std::int64_t begin, std::int64_t end) {
    const std::lock_guard<std::mutex> lock(mutex);
    ranges.emplace_back(begin, end);
  };
  for_each_part(3, 2, record);
  ASSERT_EQ(ranges.size(), 1U);
  EXPECT_EQ(ranges[0], std::make_pair(std::int64_t{0}, std::int64_t{3}));

  ranges.clear();
  for_each_part(100, 2, record);
  std::sort(ranges.begin(), ranges.end());
  ASSERT_EQ(ranges.size(), 2U);
  EXPECT_EQ(ranges[0].first, 0);
  EXPECT_EQ(ranges[0].second, ranges[1].first);
  EXPECT_EQ(ranges[1].second, 100);
}

// Work too small for a team (small matrix products) runs inside a SerialScope: parallel work the
// thread starts meanwhile runs on it alone, and the count comes back afterwards.
TEST(ParallelFor, SerialScopeKeepsPartsOnTheCaller) {
  const threads::ScopedThreadCount two_threads(2);
  ASSERT_EQ(parallel_threads(), 2);
  {
    const threads::SerialScope serial;
    EXPECT_EQ(parallel_threads(), 1);
    EXPECT_EQ(threads::thread_count(), 1);
    std::set<std::thread::id> threads;
    for_each_chunk(4 * kMinElementsPerChunk,
                   [&](std::int64_t, std::int64_t) { threads.insert(std::this_thread::get_id()); });
    EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
  }
  EXPECT_EQ(parallel_threads(), 2);
}

// More parts than threads: the team never grows past the thread count, and every part runs once.
TEST(ParallelFor, MorePartsThanThreadsUseNoMoreThreads) {
  for (int count : {1, 2}) {
    const threads::ScopedThreadCount scoped(count);
    std::mutex mutex;
    std::set<std::thread::id> seen;
    std::vector<int> runs(7, 0);
    struct Job {
      std::mutex* mutex;
      std::set<std::thread::id>* seen;
      std::vector<int>* runs;
    } job{&mutex, &seen, &runs};
    threads::run_parts(
        7,
        [](void* data, int index) {
          auto& j = *static_cast<Job*>(data);
          const std::lock_guard<std::mutex> lock(*j.mutex);
          j.seen->insert(std::this_thread::get_id());
          ++(*j.runs)[static_cast<std::size_t>(index)];
        },
        &job);
    EXPECT_EQ(runs, std::vector<int>(7, 1));
    EXPECT_LE(seen.size(), static_cast<std::size_t>(count));
    if (count == 1) EXPECT_EQ(*seen.begin(), std::this_thread::get_id());
  }
}

// A part inside a part runs on its caller: loops nest without oversubscribing the cores.
TEST(ParallelFor, PartsInsideAPartRunSerially) {
  const threads::ScopedThreadCount two_threads(2);
  std::atomic<int> inner_threads_seen{0};
  std::atomic<int> inner_parts{0};
  struct Job {
    std::atomic<int>* seen;
    std::atomic<int>* parts;
  } job{&inner_threads_seen, &inner_parts};
  threads::run_parts(
      2,
      [](void* data, int) {
        auto& j = *static_cast<Job*>(data);
        j.seen->fetch_add(threads::parallel_threads());
        threads::run_parts(
            3, [](void* inner, int) { static_cast<std::atomic<int>*>(inner)->fetch_add(1); },
            j.parts);
      },
      &job);
  EXPECT_EQ(inner_threads_seen.load(), 2);  // each of the two parts saw one thread
  EXPECT_EQ(inner_parts.load(), 6);
}

// An exception may not leave a worker thread (the runtime would end the process): run_parts
// rethrows the first one on the caller, after every running part has returned.
TEST(ParallelFor, APartsExceptionIsRethrownOnTheCaller) {
  for (int threads_count : {1, 2}) {
    const threads::ScopedThreadCount count(threads_count);
    std::atomic<int> ran{0};
    struct Job {
      std::atomic<int>* ran;
    } job{&ran};
    try {
      threads::run_parts(
          4,
          [](void* data, int index) {
            static_cast<Job*>(data)->ran->fetch_add(1);
            if (index == 1) throw std::runtime_error("part 1 failed");
          },
          &job);
      ADD_FAILURE() << "run_parts returned normally at " << threads_count << " threads";
    } catch (const std::runtime_error& error) {
      EXPECT_STREQ(error.what(), "part 1 failed");
    }
    if (threads_count == 1) {
      EXPECT_EQ(ran.load(), 2);  // in order, up to the part that threw
    } else {
      // The thread that throws may stop the other before its first part.
      EXPECT_GE(ran.load(), 1);
      EXPECT_LE(ran.load(), 4);
    }
    // The team is usable afterwards.
    std::atomic<int> after{0};
    threads::run_parts(
        4, [](void* data, int) { static_cast<std::atomic<int>*>(data)->fetch_add(1); }, &after);
    EXPECT_EQ(after.load(), 4);
  }
}

}  // namespace
}  // namespace tscope
