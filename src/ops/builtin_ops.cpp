// SPDX-License-Identifier: Apache-2.0
// The explicit list of op categories; each category's register_<category>.cpp lists its ops, one
// line each. Explicit registration (not static initialisers) so nothing is silently dropped from
// a static library.
#include "tscope/ops/registry.h"

namespace tscope {
namespace ops {
void register_conv_ops(OpRegistry& registry);
void register_elementwise_ops(OpRegistry& registry);
void register_indexing_ops(OpRegistry& registry);
void register_linalg_ops(OpRegistry& registry);
void register_loop_ops(OpRegistry& registry);
void register_nnet_ops(OpRegistry& registry);
void register_random_ops(OpRegistry& registry);
void register_recurrent_ops(OpRegistry& registry);
void register_reduce_ops(OpRegistry& registry);
void register_shape_ops(OpRegistry& registry);
}  // namespace ops

const OpRegistry& op_registry() {
  // Leaked: nodes point at their OpDef, and profiles are snapshotted at exit, after static
  // destruction has begun.
  static const OpRegistry& registry = *new OpRegistry([] {
    OpRegistry built;
    ops::register_conv_ops(built);
    ops::register_elementwise_ops(built);
    ops::register_indexing_ops(built);
    ops::register_linalg_ops(built);
    ops::register_loop_ops(built);
    ops::register_nnet_ops(built);
    ops::register_random_ops(built);
    ops::register_recurrent_ops(built);
    ops::register_reduce_ops(built);
    ops::register_shape_ops(built);
    return built;
  }());
  return registry;
}

const OpDef& op_def(std::string_view name) { return op_registry().get(name); }

}  // namespace tscope
