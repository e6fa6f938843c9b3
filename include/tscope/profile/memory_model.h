// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The memory profile: simulated running memory of a function's outputs over a node order, from
/// the recorded output sizes and the ops' aliasing declarations (Theano's count_running_memory,
/// with two of its flaws fixed: an origin is freed once, and outputs nobody reads are freed right
/// after their node). Graph inputs, shared values and constants are not counted; the allocator's
/// measured peak is reported next to the simulated one.
#include <cstdint>
#include <string>
#include <vector>

#include "tscope/profile/profile.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

struct MemoryRun {
  std::int64_t peak_bytes = 0;  ///< max running bytes, a node's inputs and outputs live together
  std::int64_t total_allocated_bytes = 0;  ///< every created output: the peak without GC
  std::int64_t saved_by_inplace_bytes = 0;
  std::int64_t saved_by_view_bytes = 0;
  /// Per node of the simulated order: the running bytes at its peak point (its outputs allocated,
  /// its inputs not yet freed); the largest is peak_bytes. The live-bytes chart of one call.
  std::vector<std::int64_t> step_bytes;
};

/// Indices into function.nodes in the VM's executed order.
[[nodiscard]] std::vector<std::size_t> executed_order(const FunctionRecord& function);
/// Kahn's algorithm, first-in first-out: the breadth-first order a naive scheduler runs.
[[nodiscard]] std::vector<std::size_t> topological_order(const FunctionRecord& function);

/// Simulates `order`; respect_inplace=false treats in-place outputs as fresh allocations.
[[nodiscard]] MemoryRun simulate_memory(const FunctionRecord& function,
                                        const std::vector<std::size_t>& order,
                                        bool respect_inplace);

/// Bytes of the outputs of `node` at its last call.
[[nodiscard]] std::int64_t tensor_bytes(const TensorRecord& tensor);

struct MemoryReportOptions {
  int n_apply = 20;
  std::int64_t min_memory_size = 1024;
};

/// The "Memory Profile" section, text.
[[nodiscard]] std::string render_memory_section(const Profile& profile,
                                                const MemoryReportOptions& options);

}  // namespace tscope::profile

#pragma GCC visibility pop
