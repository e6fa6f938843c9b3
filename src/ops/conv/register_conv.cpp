// SPDX-License-Identifier: Apache-2.0
// The convolution and pooling ops: one declaration and one call per op (or tight family), sorted.
#include "tscope/graph/op_registry.h"

namespace tscope::ops {

void register_avg_pool(OpRegistry& registry);
void register_batch_norm(OpRegistry& registry);
void register_blocked_conv(OpRegistry& registry);
void register_blocked_pools(OpRegistry& registry);
void register_blocked_training_ops(OpRegistry& registry);
void register_channel_block_reorders(OpRegistry& registry);
void register_conv(OpRegistry& registry);
void register_conv_grad_inputs(OpRegistry& registry);
void register_conv_grad_weights(OpRegistry& registry);
void register_conv_transpose(OpRegistry& registry);
void register_max_pool(OpRegistry& registry);

void register_conv_ops(OpRegistry& registry) {
  register_avg_pool(registry);
  register_batch_norm(registry);
  register_blocked_conv(registry);
  register_blocked_pools(registry);
  register_blocked_training_ops(registry);
  register_channel_block_reorders(registry);
  register_conv(registry);
  register_conv_grad_inputs(registry);
  register_conv_grad_weights(registry);
  register_conv_transpose(registry);
  register_max_pool(registry);
}

}  // namespace tscope::ops
