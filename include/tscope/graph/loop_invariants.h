// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Loop-invariant inputs. While a loop op runs its body, the tensors bound to the body's
/// non-sequence inputs stay the same at every step of that execution. A kernel that derives
/// something costly from an input (packed weights) may then keep it for the whole execution
/// instead of deriving it again at every step. The loop publishes that promise with a
/// LoopInvariantScope on the thread that runs the body; kernels ask loop_invariant_execution.
#include <cstdint>
#include <span>

#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

/// For its lifetime, on this thread: the tensors bound to `invariant_inputs` (variables of the
/// body graph being run) do not change. Each scope draws a new execution number. Scopes nest
/// (a loop inside a loop's body); the innermost one answers.
class LoopInvariantScope {
 public:
  explicit LoopInvariantScope(std::span<const Variable> invariant_inputs) noexcept;
  ~LoopInvariantScope();
  LoopInvariantScope(const LoopInvariantScope&) = delete;
  LoopInvariantScope& operator=(const LoopInvariantScope&) = delete;
  LoopInvariantScope(LoopInvariantScope&&) = delete;
  LoopInvariantScope& operator=(LoopInvariantScope&&) = delete;

 private:
  friend std::uint64_t loop_invariant_execution(const Variable& value);
  std::span<const Variable> inputs_;
  std::uint64_t execution_;
  const LoopInvariantScope* enclosing_;
};

/// Non-zero when `value`'s data stays the same until the innermost running loop execution ends:
/// it is one of that body's invariant inputs, or a view of those and constants. The number
/// identifies the execution, so a kernel may keep what it derived while the number is the same.
/// 0 outside a loop's body and for any other value.
[[nodiscard]] std::uint64_t loop_invariant_execution(const Variable& value);

}  // namespace tscope

#pragma GCC visibility pop
