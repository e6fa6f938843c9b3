// SPDX-License-Identifier: Apache-2.0
// The linalg ops: one declaration and one call per op, sorted.
#include "tscope/graph/op_registry.h"

namespace tscope::ops {

void register_batched_dot(OpRegistry& registry);
void register_dot(OpRegistry& registry);
void register_dot22(OpRegistry& registry);
void register_gemm(OpRegistry& registry);
void register_gemv(OpRegistry& registry);
void register_ger(OpRegistry& registry);

void register_linalg_ops(OpRegistry& registry) {
  register_batched_dot(registry);
  register_dot(registry);
  register_dot22(registry);
  register_gemm(registry);
  register_gemv(registry);
  register_ger(registry);
}

}  // namespace tscope::ops
