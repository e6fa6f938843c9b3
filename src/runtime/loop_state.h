// SPDX-License-Identifier: Apache-2.0
#pragma once
// LoopState: what a loop node (Scan) keeps in its instruction's kernel state, per frame: the
// body's own frame (so concurrent calls of a function each run the body in their own slots) and,
// when profiled, the loop's totals. Function snapshots read it through the frames they take
// (profile_merge.h).
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "program.h"

namespace tscope::runtime {

/// Step times on a log scale with 16 linear buckets per power of two, so that the median read
/// back from the buckets is within about 3% of the true one.
class StepHistogram {
 public:
  static constexpr int kBucketsPerOctave = 16;
  static constexpr int kBucketCount = 64 * kBucketsPerOctave;
  void add(std::int64_t ticks) noexcept { ++counts_[static_cast<std::size_t>(bucket(ticks))]; }
  void add(const StepHistogram& other) noexcept {
    for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  }
  void clear() noexcept { counts_.fill(0); }
  /// The middle of the bucket holding the median step; 0 when empty.
  [[nodiscard]] double median_ticks() const noexcept;

 private:
  [[nodiscard]] static int bucket(std::int64_t ticks) noexcept {
    if (ticks < kBucketsPerOctave) return static_cast<int>(ticks < 0 ? 0 : ticks);
    const auto value = static_cast<std::uint64_t>(ticks);
    const int octave = std::bit_width(value) - 1;  // >= 4
    const int fraction = static_cast<int>((value >> (octave - 4)) & (kBucketsPerOctave - 1));
    return (octave - 3) * kBucketsPerOctave + fraction;
  }
  std::array<std::int64_t, kBucketCount> counts_{};
};

struct LoopTotals {
  std::int64_t call_count = 0;
  std::int64_t step_count = 0;
  std::int64_t call_ticks = 0;
  std::int64_t vm_ticks = 0;
  std::int64_t bind_ticks = 0;
  std::int64_t store_ticks = 0;
  std::int64_t first_step_ticks = 0;
  std::int64_t step_min_ticks = std::numeric_limits<std::int64_t>::max();
  std::int64_t step_max_ticks = 0;
  StepHistogram steps;  ///< steps after the first of each execution
};

struct LoopState final : KernelState {
  const Program* program = nullptr;  ///< the body's (owned by the body)
  std::unique_ptr<Frame> frame;      ///< the body's frame, with profile counters
  LoopTotals totals;
  /// Stacks of the fed-back outputs from the previous execution, reused when nobody holds them.
  std::vector<Tensor> state_stacks;
};

/// Zeroes a frame's node counters and totals, and those of every loop body it runs, at any depth
/// (ignore_first_call, reset_profile_timings). Shape signatures stay.
void forget_frame_timings(Frame& frame);

}  // namespace tscope::runtime
