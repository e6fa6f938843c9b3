// SPDX-License-Identifier: Apache-2.0
#pragma once
// Program: a linked function, immutable once linked. Every Variable of the graph has a slot index;
// every Apply is an instruction (a kernel and the slots it reads and writes). The mutable side of
// a call lives in a Frame: the slots themselves (Tensors), one KernelContext per instruction,
// built once per frame, pointing at that frame's slots, the kernels' prepared state, the buffer
// pool and the profile counters. A Function keeps a pool of frames, so that calls from several
// threads run at once, each in its own frame, and a repeated call from one thread reuses one
// frame and allocates nothing. Frame vectors are sized when it is made and never grow, so the
// contexts' pointers stay valid for the frame's life.
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tscope/core/allocator.h"
#include "tscope/core/buffer_pool.h"
#include "tscope/core/clock.h"
#include "tscope/graph/function_graph.h"
#include "tscope/graph/op_def.h"
#include "tscope/profile/profile.h"
#include "tscope/profile/trace_recorder.h"

namespace tscope::runtime {

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
  /// While tracing: the calling thread's ring, the function's trace id, and the allocator whose
  /// live bytes each node event carries. Null when not tracing.
  profile::TraceRing* trace = nullptr;
  std::uint32_t trace_function = 0;
  const TrackingAllocator* allocator = nullptr;
};

/// The profiled run in progress on this thread: a loop node's kernel profiles its body into its
/// own counters with this run's clock. Program::run<true> sets it for its extent; null sink
/// outside profiled runs.
struct ActiveProfile {
  const ProfileSink* sink = nullptr;
  bool tsc = false;
};
[[nodiscard]] ActiveProfile& active_profile() noexcept;

/// Per-call totals of one frame (profiling only).
struct ThreadMark;

struct FrameTotals {
  std::int64_t call_count = 0;
  std::int64_t call_ns = 0;
  std::int64_t vm_ns = 0;
  std::int64_t input_bytes = 0;  ///< of the frame's last call
  std::int64_t measured_peak_bytes = 0;
  bool first_call_pending = true;
};

/// The mutable state of one call in flight: see the file comment. Made by Program::make_frame;
/// used by one thread at a time (a Function hands it out through `in_use`, or `kept_by`).
struct Frame {
  std::vector<Tensor> slots;
  std::vector<const Tensor*> input_pointers;
  std::vector<Tensor*> output_pointers;
  std::vector<KernelContext> contexts;  ///< one per instruction, with its kernel's state
  // allow_gc: buffers freed during a run, reused by later nodes of the same run (behind a pointer
  // so that contexts keep a stable address for it).
  std::unique_ptr<BufferPool> pool;
  // Profiling: written by the VM's profiled loop while the frame is in use; read by snapshots,
  // which take the frame first.
  std::vector<NodeCounters> counters;
  std::vector<NodeSignatures> signatures;
  FrameTotals totals;
  /// Taken (exchange true) by the call or snapshot that uses the frame, released by storing false.
  /// Calls of an unprofiled Function use `kept_by` instead.
  std::atomic<bool> in_use{false};
  /// Unprofiled Functions: the thread that keeps this frame between its calls (thread_mark.h);
  /// null or a dead thread's mark when the frame is free. The frame holds a reference to it.
  std::atomic<ThreadMark*> kept_by{nullptr};
  /// Set by the keeping thread while one of its calls runs in the frame, so a nested call of the
  /// same Function from that thread takes another frame.
  bool kept_in_call = false;
  /// The next frame of the owning Function's list (frames are never removed until it dies).
  Frame* next = nullptr;
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

  /// A new frame: slots sized, constants bound, one context per instruction; with `profiling`,
  /// zeroed counters too.
  [[nodiscard]] std::unique_ptr<Frame> make_frame(bool profiling) const;

  [[nodiscard]] int slot_of(const Variable& variable) const;
  [[nodiscard]] std::size_t instruction_count() const noexcept { return kernels_.size(); }
  [[nodiscard]] ApplyNode* node(std::size_t index) const { return nodes_[index]; }
  [[nodiscard]] std::string_view impl_name(std::size_t index) const { return impl_names_[index]; }
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
  /// Constant slots: bound once per frame, since a constant's value never changes; rebinding
  /// them every call cost more than running a small graph.
  [[nodiscard]] const std::vector<int>& constant_slots() const noexcept { return constant_slots_; }
  /// Apply-output slots the allow_gc VM does not free during a run: the kept values (outputs,
  /// update values) and outputs nobody reads. The caller empties them after the call.
  [[nodiscard]] const std::vector<int>& slots_held_after_run() const noexcept {
    return held_after_run_;
  }

  /// Runs every instruction in `frame`. kProfile: time each into `sink` (reading the TSC when
  /// kTsc, else sink.clock) and track its input signatures.
  template <bool kProfile, bool kTsc = false>
  void run(Frame& frame, const ProfileSink& sink) const;

  /// The profiler's own cost per node execution, measured once per process on a synthetic program
  /// of one-input no-op instructions: profiled minus unprofiled loop time, per node.
  [[nodiscard]] static double measured_overhead_ns_per_node();

 private:
  std::size_t slot_count_ = 0;
  std::unordered_map<const VariableNode*, int> slot_index_;
  std::vector<KernelFn> kernels_;
  std::vector<ApplyNode*> nodes_;
  std::vector<std::string_view> impl_names_;
  std::vector<std::vector<int>> input_slots_;
  std::vector<std::vector<int>> output_slots_;
  // allow_gc: after instruction i, clear slots free_slots_[free_begin_[i] .. free_begin_[i+1]).
  std::vector<int> free_slots_;
  std::vector<std::int32_t> free_begin_;
  std::vector<std::pair<int, Variable>> shared_slots_;
  std::vector<int> constant_slots_;
  std::vector<Tensor> constant_values_;  ///< parallel to constant_slots_
  std::vector<int> intermediate_slots_;
  std::vector<int> held_after_run_;
  /// Per instruction: the input its output 0 may overwrite (-1: none), and how many holders that
  /// input's buffer may then have (KernelContext::inplace_holders).
  std::vector<int> inplace_inputs_;
  std::vector<long> inplace_holders_;
  /// Without allow_gc: (overwritten input slot, output slot) of each in-place instruction whose
  /// output is not kept, in execution order; the output slot is emptied after a run.
  std::vector<std::pair<int, int>> inplace_slots_;
  bool allow_gc_ = true;

  /// `duration`: this call's ticks, already in the counters but belonging to the new signature.
  void record_signature(const Frame& frame,
                        std::size_t index,
                        std::uint64_t signature,
                        std::int64_t duration,
                        const ProfileSink& sink) const;
};

}  // namespace tscope::runtime
