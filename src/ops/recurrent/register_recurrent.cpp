// SPDX-License-Identifier: Apache-2.0
// The recurrent ops: one declaration and one call per op family (forward op and its Grad op),
// sorted.
#include "tscope/graph/op_registry.h"

namespace tscope::ops {

void register_gru(OpRegistry& registry);
void register_lstm(OpRegistry& registry);
void register_rnn(OpRegistry& registry);

void register_recurrent_ops(OpRegistry& registry) {
  register_gru(registry);
  register_lstm(registry);
  register_rnn(registry);
}

}  // namespace tscope::ops
