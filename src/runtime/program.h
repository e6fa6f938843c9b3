// SPDX-License-Identifier: Apache-2.0
#pragma once
// Program: a linked function. Every Variable of the graph has a slot (a Tensor); every Apply is an
// Instruction whose KernelContext, built here once, points at its input and output slots. The VM
// then only calls kernel(context) in order. Vectors are sized at link time and never grow, so
// those pointers stay valid for the Program's life.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tscope/core/buffer_pool.h"
#include "tscope/core/clock.h"
#include "tscope/graph/function_graph.h"
#include "tscope/graph/op_def.h"
#include "tscope/profile/profile.h"

namespace tscope::runtime {

struct Instruction {
  KernelFn kernel = nullptr;
  KernelContext context;
};

/// Per-node profile counters, written by the VM's profiled loop. Times are raw ticks of the
/// profile's TickSource (nanoseconds unless it is rdtsc); snapshots convert them.
struct NodeCounters {
  std::int64_t call_count = 0;
  std::int64_t total_ticks = 0;
  std::int64_t min_ticks = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_ticks = 0;
  /// Hash of the input signature of the last call, and calls since it last changed.
  std::uint64_t last_signature = 0;
  std::int32_t signature_index = -1;  ///< into NodeSignatures::records; -1 before the first call
  std::int64_t signature_run = 0;
};

/// Distinct input signatures of one node (cold: touched only when a signature changes).
struct NodeSignatures {
  std::vector<std::uint64_t> hashes;
  std::vector<profile::SignatureRecord> records;
  /// Per record: ticks and calls of its finished runs, within NodeCounters' timed calls.
  std::vector<std::int64_t> ticks;
  std::vector<std::int64_t> timed_calls;
  /// NodeCounters::total_ticks and call_count when the current signature's run began: the run's
  /// time is the difference, so the hot loop writes nothing more per call.
  std::int64_t run_start_ticks = 0;
  std::int64_t run_start_calls = 0;
};

/// Where the profiled loop writes, and how it reads time.
struct ProfileSink {
  NodeCounters* counters = nullptr;
  NodeSignatures* signatures = nullptr;
  Clock* clock = nullptr;  ///< read when the tick source is not rdtsc
};

/// dtype/shape/strides of a tensor as the profile model records it.
[[nodiscard]] profile::TensorRecord tensor_record(const Tensor& value);

struct LinkOptions {
  bool allow_gc = true;
  bool reference_kernels = false;
};

class Program {
 public:
  /// Links `graph` (already rewritten). `outputs` and `update_values` are graph variables whose
  /// slots must survive the call. Fills `record` with link and per-node preparation times.
  static Program link(const FunctionGraph& graph,
                      const std::vector<Variable>& kept_values,
                      const LinkOptions& options,
                      Clock& clock,
                      profile::CompileRecord& record);

  Program() = default;
  Program(Program&&) = default;
  Program& operator=(Program&&) = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  [[nodiscard]] int slot_of(const Variable& variable) const;
  [[nodiscard]] std::size_t instruction_count() const noexcept { return instructions_.size(); }
  [[nodiscard]] ApplyNode* node(std::size_t index) const { return nodes_[index]; }
  [[nodiscard]] std::string_view impl_name(std::size_t index) const { return impl_names_[index]; }
  [[nodiscard]] std::vector<Tensor>& slots() noexcept { return slots_; }
  [[nodiscard]] const std::vector<Tensor>& slots() const noexcept { return slots_; }
  /// Slots read/written by instruction `index`.
  [[nodiscard]] const std::vector<int>& input_slots(std::size_t index) const {
    return input_slots_[index];
  }
  [[nodiscard]] const std::vector<int>& output_slots(std::size_t index) const {
    return output_slots_[index];
  }
  /// Shared-variable slots: filled at call start (a value may be set between calls), emptied at
  /// call end.
  [[nodiscard]] const std::vector<std::pair<int, Variable>>& shared_slots() const noexcept {
    return shared_slots_;
  }
  /// Constant slots: bound once at link time, since a constant's value never changes; rebinding
  /// them every call cost more than running a small graph.
  [[nodiscard]] const std::vector<int>& constant_slots() const noexcept { return constant_slots_; }
  /// Apply-output slots the allow_gc VM does not free during a run: the kept values (outputs,
  /// update values) and outputs nobody reads. The caller empties them after the call.
  [[nodiscard]] const std::vector<int>& slots_held_after_run() const noexcept {
    return held_after_run_;
  }

  /// Runs every instruction. kProfile: time each into `sink` (reading the TSC when kTsc, else
  /// sink.clock) and track its input signatures.
  template <bool kProfile, bool kTsc = false>
  void run(const ProfileSink& sink);

  /// The profiler's own cost per node execution, measured once per process on a synthetic program
  /// of one-input no-op instructions: profiled minus unprofiled loop time, per node.
  [[nodiscard]] static double measured_overhead_ns_per_node();

 private:
  std::vector<Tensor> slots_;
  std::unordered_map<const VariableNode*, int> slot_index_;
  std::vector<const Tensor*> input_pointers_;
  std::vector<Tensor*> output_pointers_;
  std::vector<Instruction> instructions_;
  std::vector<ApplyNode*> nodes_;
  std::vector<std::string_view> impl_names_;
  std::vector<std::vector<int>> input_slots_;
  std::vector<std::vector<int>> output_slots_;
  // allow_gc: after instruction i, clear slots free_slots_[free_begin_[i] .. free_begin_[i+1]).
  std::vector<int> free_slots_;
  std::vector<std::int32_t> free_begin_;
  std::vector<std::pair<int, Variable>> shared_slots_;
  std::vector<int> constant_slots_;
  std::vector<int> intermediate_slots_;
  std::vector<int> held_after_run_;
  bool allow_gc_ = true;
  // allow_gc: buffers freed during a run, reused by later nodes of the same run (behind a pointer
  // so instructions keep a stable address when the Program moves).
  std::unique_ptr<BufferPool> pool_;

  /// `duration`: this call's ticks, already in the counters but belonging to the new signature.
  void record_signature(std::size_t index,
                        std::uint64_t signature,
                        std::int64_t duration,
                        const ProfileSink& sink);
};

}  // namespace tscope::runtime
