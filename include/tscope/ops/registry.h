// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Access to the registry of built-in ops.
#include <string_view>

#include "tscope/graph/op_registry.h"

#pragma GCC visibility push(default)

namespace tscope {

/// The process-wide registry with every built-in op (registered on first use, thread-safe).
[[nodiscard]] const OpRegistry& op_registry();

/// Shorthand for op_registry().get(name).
[[nodiscard]] const OpDef& op_def(std::string_view name);

}  // namespace tscope

#pragma GCC visibility pop
