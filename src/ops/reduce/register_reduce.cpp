// SPDX-License-Identifier: Apache-2.0
// The reduce ops: one declaration and one call per op, sorted.
#include "tscope/graph/op_registry.h"

namespace tscope::ops {

void register_all(OpRegistry& registry);
void register_any(OpRegistry& registry);
void register_argmax(OpRegistry& registry);
void register_argmin(OpRegistry& registry);
void register_extremum_grad(OpRegistry& registry);
void register_max(OpRegistry& registry);
void register_mean(OpRegistry& registry);
void register_mean_grad(OpRegistry& registry);
void register_min(OpRegistry& registry);
void register_prod(OpRegistry& registry);
void register_prod_grad(OpRegistry& registry);
void register_sum(OpRegistry& registry);

void register_reduce_ops(OpRegistry& registry) {
  register_all(registry);
  register_any(registry);
  register_argmax(registry);
  register_argmin(registry);
  register_extremum_grad(registry);
  register_max(registry);
  register_mean(registry);
  register_mean_grad(registry);
  register_min(registry);
  register_prod(registry);
  register_prod_grad(registry);
  register_sum(registry);
}

}  // namespace tscope::ops
