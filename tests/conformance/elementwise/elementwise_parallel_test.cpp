// SPDX-License-Identifier: Apache-2.0
// Long elementwise loops split into chunks on the OpenMP threads: the chunking itself (tiling,
// alignment, one chunk per thread), that the chunks really run on several threads, and that every
// loop shape gives the serial result bit for bit and matches the reference kernels.
#include <algorithm>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "support/test_util.h"
#include "tscope/ops/parallel_chunks.h"

namespace tscope {
namespace {
using ops::detail::chunk_count;
using ops::detail::chunk_range;
using ops::detail::ChunkRange;
using ops::detail::for_each_chunk;
using ops::detail::kChunkAlignment;
using ops::detail::kMinElementsPerChunk;
using ops::detail::parallel_threads;

TEST(ParallelChunks, ChunksTileTheRangeOnAlignedBoundaries) {
  for (std::int64_t count : {std::int64_t{1}, std::int64_t{15}, std::int64_t{16},
                             std::int64_t{1000}, std::int64_t{70001}, std::int64_t{65536}}) {
    for (int parts = 1; parts <= 5; ++parts) {
      std::int64_t expected_begin = 0;
      std::int64_t shortest = count;
      std::int64_t longest = 0;
      for (int index = 0; index < parts; ++index) {
        const ChunkRange range = chunk_range(count, parts, index);
        EXPECT_EQ(range.begin, expected_begin) << count << " elements, chunk " << index << "/" << parts;
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

TEST(ParallelChunks, OneChunkPerThreadAndNoneShorterThanTheMinimum) {
  EXPECT_EQ(chunk_count(10 * kMinElementsPerChunk, 1), 1);
  EXPECT_EQ(chunk_count(2 * kMinElementsPerChunk - 1, 8), 1);
  EXPECT_EQ(chunk_count(2 * kMinElementsPerChunk, 8), 2);
  EXPECT_EQ(chunk_count(5 * kMinElementsPerChunk / 2, 4), 2);
  EXPECT_EQ(chunk_count(100 * kMinElementsPerChunk, 3), 3);
}

TEST(ParallelChunks, LongLoopsRunOnSeveralThreadsShortOnesOnTheCaller) {
  const testing::ScopedOpenMpThreads two_threads(2);
  ASSERT_EQ(parallel_threads(), 2) << "the OpenMP runtime (oneDNN's) should be found";
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

// Work too small for a team (small matrix products) runs inside a OneThreadScope: OpenMP regions
// the thread starts meanwhile run on it alone, and the setting comes back afterwards.
TEST(ParallelChunks, OneThreadScopeKeepsRegionsOnTheCaller) {
  const testing::ScopedOpenMpThreads two_threads(2);
  ASSERT_EQ(parallel_threads(), 2);
  {
    const ops::detail::OneThreadScope one_thread;
    EXPECT_EQ(parallel_threads(), 1);
    std::set<std::thread::id> threads;
    for_each_chunk(4 * kMinElementsPerChunk,
                   [&](std::int64_t, std::int64_t) { threads.insert(std::this_thread::get_id()); });
    EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
  }
  EXPECT_EQ(parallel_threads(), 2);
}

struct LoopCase {
  const char* name;
  std::vector<Dims> shapes;
  DType dtype;
  Variable (*build)(const std::vector<Variable>&);
};

void PrintTo(const LoopCase& c, std::ostream* os) { *os << c.name; }

class ParallelElementwise : public ::testing::TestWithParam<LoopCase> {};

// 70001 elements: three chunks at three threads, none a whole number of rows or vectors.
TEST_P(ParallelElementwise, ThreeThreadsGiveTheSerialResultAndMatchTheReference) {
  const LoopCase& c = GetParam();
  std::vector<Variable> inputs;
  std::vector<Tensor> values;
  for (std::size_t i = 0; i < c.shapes.size(); ++i) {
    inputs.push_back(tensor(c.dtype, c.shapes[i], "in" + std::to_string(i)));
    values.push_back(testing::random_tensor(c.dtype, c.shapes[i], 31 + i, -3.0, 3.0));
  }
  const Variable output = c.build(inputs);
  std::vector<Tensor> serial;
  {
    const testing::ScopedOpenMpThreads one_thread(1);
    serial = testing::run_graph(inputs, {output}, values);
  }
  const testing::ScopedOpenMpThreads three_threads(3);
  const std::vector<Tensor> parallel = testing::run_graph(inputs, {output}, values);
  EXPECT_TRUE(testing::all_close(parallel[0], serial[0], 0.0, 0.0));
  EXPECT_TRUE(testing::fast_matches_reference(inputs, {output}, values, 1e-5, 1e-6));
}

const Dims kLong{70001};

INSTANTIATE_TEST_SUITE_P(
    Loops, ParallelElementwise,
    ::testing::Values(
        LoopCase{"AllFull", {kLong, kLong}, DType::Float32,
                 [](const std::vector<Variable>& in) { return add(in[0], in[1]); }},
        LoopCase{"RowBroadcast", {Dims{71, 1001}, Dims{1001}}, DType::Float32,
                 [](const std::vector<Variable>& in) { return add(in[0], in[1]); }},
        LoopCase{"ScalarOperand", {kLong, Dims{}}, DType::Float64,
                 [](const std::vector<Variable>& in) { return mul(in[1], in[0]); }},
        LoopCase{"ScalarBounds", {kLong, Dims{}, Dims{}}, DType::Float32,
                 [](const std::vector<Variable>& in) { return clip(in[0], in[1], in[2]); }},
        LoopCase{"ConvertedOutput", {kLong, kLong}, DType::Float32,
                 [](const std::vector<Variable>& in) { return gt(in[0], in[1]); }},
        LoopCase{"SimdFloat32", {kLong}, DType::Float32,
                 [](const std::vector<Variable>& in) { return exp(in[0]); }},
        LoopCase{"SimdFloat64", {kLong}, DType::Float64,
                 [](const std::vector<Variable>& in) { return exp(in[0]); }}),
    [](const ::testing::TestParamInfo<LoopCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace tscope
