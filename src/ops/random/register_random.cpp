// SPDX-License-Identifier: Apache-2.0
// The random ops: one declaration and one call per op, sorted.
#include "tscope/graph/op_registry.h"

namespace tscope::ops {

void register_integers(OpRegistry& registry);
void register_normal(OpRegistry& registry);
void register_uniform(OpRegistry& registry);

void register_random_ops(OpRegistry& registry) {
  register_integers(registry);
  register_normal(registry);
  register_uniform(registry);
}

}  // namespace tscope::ops
