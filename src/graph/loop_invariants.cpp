// SPDX-License-Identifier: Apache-2.0
#include "tscope/graph/loop_invariants.h"

#include <atomic>
#include <cstdlib>

#include "tscope/graph/traversal.h"

namespace tscope {
namespace {
thread_local const LoopInvariantScope* t_innermost = nullptr;
// Execution numbers are unique across threads, so a kernel state that moves between threads
// (a frame reused by another caller) never mistakes another execution's promise for its own.
std::atomic<std::uint64_t> g_next_execution{1};
}  // namespace

LoopInvariantScope::LoopInvariantScope(std::span<const Variable> invariant_inputs) noexcept
    : inputs_(invariant_inputs),
      execution_(g_next_execution.fetch_add(1, std::memory_order_relaxed)),
      enclosing_(t_innermost) {
  t_innermost = this;
}

LoopInvariantScope::~LoopInvariantScope() { t_innermost = enclosing_; }

std::uint64_t loop_invariant_execution(const Variable& value) {
  static const bool off = std::getenv("TSCOPE_NO_INVARIANT") != nullptr;
  if (off) return 0;
  const LoopInvariantScope* scope = t_innermost;
  if (scope == nullptr || scope->inputs_.empty()) return 0;
  return views_only(value, scope->inputs_) ? scope->execution_ : 0;
}

}  // namespace tscope
