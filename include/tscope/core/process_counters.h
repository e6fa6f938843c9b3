// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Process-wide counters the profile's "Globals" section prints (time spent in grad(), ...).
#include <cstdint>

#pragma GCC visibility push(default)

namespace tscope {

void add_grad_time_ns(std::int64_t duration_ns) noexcept;
[[nodiscard]] std::int64_t grad_time_ns() noexcept;

}  // namespace tscope

#pragma GCC visibility pop
