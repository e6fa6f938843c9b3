// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/process_counters.h"

#include <atomic>

namespace tscope {
namespace {
std::atomic<std::int64_t> grad_time_total_ns{0};
}  // namespace

void add_grad_time_ns(std::int64_t duration_ns) noexcept {
  grad_time_total_ns.fetch_add(duration_ns, std::memory_order_relaxed);
}

std::int64_t grad_time_ns() noexcept { return grad_time_total_ns.load(std::memory_order_relaxed); }

}  // namespace tscope
