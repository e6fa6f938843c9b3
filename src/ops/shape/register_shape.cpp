// SPDX-License-Identifier: Apache-2.0
// The shape ops: one declaration and one call per op, sorted.
#include "tscope/graph/op_registry.h"

namespace tscope::ops {

void register_alloc(OpRegistry& registry);
void register_arange(OpRegistry& registry);
void register_dimshuffle(OpRegistry& registry);
void register_flatten(OpRegistry& registry);
void register_join(OpRegistry& registry);
void register_make_vector(OpRegistry& registry);
void register_reshape(OpRegistry& registry);
void register_shape(OpRegistry& registry);
void register_shape_i(OpRegistry& registry);
void register_split(OpRegistry& registry);

void register_shape_ops(OpRegistry& registry) {
  register_alloc(registry);
  register_arange(registry);
  register_dimshuffle(registry);
  register_flatten(registry);
  register_join(registry);
  register_make_vector(registry);
  register_reshape(registry);
  register_shape(registry);
  register_shape_i(registry);
  register_split(registry);
}

}  // namespace tscope::ops
