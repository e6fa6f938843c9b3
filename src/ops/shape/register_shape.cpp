// SPDX-License-Identifier: Apache-2.0
// The shape ops: one declaration and one call per op, sorted.
#include "tscope/graph/op_registry.h"

namespace tscope::ops {

void register_dimshuffle(OpRegistry& registry);

void register_shape_ops(OpRegistry& registry) {
  register_dimshuffle(registry);
}

}  // namespace tscope::ops
