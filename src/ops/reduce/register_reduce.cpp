// SPDX-License-Identifier: Apache-2.0
// The reduce ops: one declaration and one call per op, sorted.
#include "tscope/graph/op_registry.h"

namespace tscope::ops {

void register_mean(OpRegistry& registry);
void register_mean_grad(OpRegistry& registry);
void register_sum(OpRegistry& registry);

void register_reduce_ops(OpRegistry& registry) {
  register_mean(registry);
  register_mean_grad(registry);
  register_sum(registry);
}

}  // namespace tscope::ops
