// SPDX-License-Identifier: Apache-2.0
// The elementwise ops: one declaration and one call per op, sorted.
#include "tscope/graph/op_registry.h"

namespace tscope::ops {

void register_add(OpRegistry& registry);
void register_cast(OpRegistry& registry);
void register_exp(OpRegistry& registry);
void register_ge(OpRegistry& registry);
void register_log(OpRegistry& registry);
void register_maximum(OpRegistry& registry);
void register_mul(OpRegistry& registry);
void register_neg(OpRegistry& registry);
void register_second(OpRegistry& registry);
void register_sqr(OpRegistry& registry);
void register_sub(OpRegistry& registry);
void register_true_div(OpRegistry& registry);

void register_elementwise_ops(OpRegistry& registry) {
  register_add(registry);
  register_cast(registry);
  register_exp(registry);
  register_ge(registry);
  register_log(registry);
  register_maximum(registry);
  register_mul(registry);
  register_neg(registry);
  register_second(registry);
  register_sqr(registry);
  register_sub(registry);
  register_true_div(registry);
}

}  // namespace tscope::ops
