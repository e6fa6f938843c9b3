// SPDX-License-Identifier: Apache-2.0
// The nnet ops: one declaration and one call per op (or tight family), sorted.
#include "tscope/graph/op_registry.h"

namespace tscope::ops {

void register_crossentropy_categorical(OpRegistry& registry);
void register_crossentropy_softmax(OpRegistry& registry);
void register_layer_norm(OpRegistry& registry);
void register_log_softmax(OpRegistry& registry);
void register_softmax(OpRegistry& registry);

void register_nnet_ops(OpRegistry& registry) {
  register_crossentropy_categorical(registry);
  register_crossentropy_softmax(registry);
  register_layer_norm(registry);
  register_log_softmax(registry);
  register_softmax(registry);
}

}  // namespace tscope::ops
