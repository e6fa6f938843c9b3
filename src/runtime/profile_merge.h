// SPDX-License-Identifier: Apache-2.0
#pragma once
// ProfileMerge: the profile records of one Program from the counters of every frame that ran it,
// with each loop node's body merged the same way, at any depth. A function's snapshot adds each
// frame while it holds it, then asks for the records.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "loop_state.h"
#include "program.h"
#include "tscope/ops/linalg.h"
#include "tscope/profile/profile.h"

namespace tscope::runtime {

class ProfileMerge {
 public:
  explicit ProfileMerge(const Program& program);
  ~ProfileMerge();
  ProfileMerge(const ProfileMerge&) = delete;
  ProfileMerge& operator=(const ProfileMerge&) = delete;

  /// Adds one frame's counters, and its loop nodes' totals and body counters.
  void add(const Frame& frame);
  /// One record per instruction. `copies_before`: per instruction, the BLAS input copies counted
  /// before the timed calls (empty: count from the process start). Times: ticks * ns_per_tick.
  [[nodiscard]] std::vector<profile::NodeRecord> node_records(
      double ns_per_tick, std::span<const BlasCopyStats> copies_before) const;
  /// One record per loop node that has run, in instruction order, bodies filled.
  [[nodiscard]] std::vector<profile::LoopRecord> loop_records(double ns_per_tick) const;

 private:
  struct MergedNode;
  struct MergedLoop;
  const Program& program_;
  std::vector<MergedNode> merged_;
  std::vector<MergedLoop> loops_;
};

}  // namespace tscope::runtime
