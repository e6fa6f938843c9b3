// SPDX-License-Identifier: Apache-2.0
// The linalg ops: one declaration and one call per op, sorted.
#include "tscope/graph/op_registry.h"

namespace tscope::ops {

void register_dot(OpRegistry& registry);

void register_linalg_ops(OpRegistry& registry) {
  register_dot(registry);
}

}  // namespace tscope::ops
