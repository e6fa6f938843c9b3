// SPDX-License-Identifier: Apache-2.0
// The indexing ops: one declaration and one call per op, sorted.
#include "tscope/graph/op_registry.h"

namespace tscope::ops {

void register_advanced_inc_subtensor(OpRegistry& registry);
void register_advanced_inc_subtensor1(OpRegistry& registry);
void register_advanced_subtensor(OpRegistry& registry);
void register_advanced_subtensor1(OpRegistry& registry);
void register_inc_subtensor(OpRegistry& registry);
void register_nonzero(OpRegistry& registry);
void register_subtensor(OpRegistry& registry);

void register_indexing_ops(OpRegistry& registry) {
  register_advanced_inc_subtensor(registry);
  register_advanced_inc_subtensor1(registry);
  register_advanced_subtensor(registry);
  register_advanced_subtensor1(registry);
  register_inc_subtensor(registry);
  register_nonzero(registry);
  register_subtensor(registry);
}

}  // namespace tscope::ops
