// SPDX-License-Identifier: Apache-2.0
#pragma once
// Program: a linked function. Every Variable of the graph has a slot (a Tensor); every Apply is an
// Instruction whose KernelContext, built here once, points at its input and output slots. The VM
// then only calls kernel(context) in order. Vectors are sized at link time and never grow, so
// those pointers stay valid for the Program's life.
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tscope/core/clock.h"
#include "tscope/graph/function_graph.h"
#include "tscope/graph/op_def.h"
#include "tscope/profile/profile.h"

namespace tscope::runtime {

struct Instruction {
  KernelFn kernel = nullptr;
  KernelContext context;
};

/// Per-node profile counters, written by the VM's profiled loop.
struct NodeCounters {
  std::int64_t call_count = 0;
  std::int64_t total_ns = 0;
  std::int64_t min_ns = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_ns = 0;
};

/// dtype/shape/strides of a slot at its last write (profiling only).
struct SlotSnapshot {
  bool defined = false;
  DType dtype = DType::Float32;
  Dims shape;
  Dims strides;
};

struct LinkOptions {
  bool allow_gc = true;
  bool reference_kernels = false;
};

class Program {
 public:
  /// Links `graph` (already rewritten). `outputs` and `update_values` are graph variables whose
  /// slots must survive the call. Fills `record` with link and per-node preparation times.
  static Program link(const FunctionGraph& graph, const std::vector<Variable>& kept_values,
                      const LinkOptions& options, Clock& clock, profile::CompileRecord& record);

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
  [[nodiscard]] const std::vector<int>& input_slots(std::size_t index) const { return input_slots_[index]; }
  [[nodiscard]] const std::vector<int>& output_slots(std::size_t index) const { return output_slots_[index]; }
  /// Constant and shared-variable slots (filled at call start).
  [[nodiscard]] const std::vector<std::pair<int, Variable>>& leaf_slots() const noexcept { return leaf_slots_; }
  /// Slots of Apply outputs (cleared after a call when allow_gc).
  [[nodiscard]] const std::vector<int>& intermediate_slots() const noexcept { return intermediate_slots_; }

  /// Runs every instruction. kProfile: time each into `counters` and snapshot output shapes.
  template <bool kProfile>
  void run(NodeCounters* counters, SlotSnapshot* snapshots, Clock* clock);

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
  std::vector<std::pair<int, Variable>> leaf_slots_;
  std::vector<int> intermediate_slots_;
  bool allow_gc_ = true;
};

}  // namespace tscope::runtime
