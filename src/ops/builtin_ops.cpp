// SPDX-License-Identifier: Apache-2.0
// The explicit list of built-in ops: one declaration and one call per op, sorted. Explicit
// registration (not static initialisers) so nothing is silently dropped from a static library.
#include <mutex>

#include "tscope/ops/registry.h"

namespace tscope {
namespace ops {
void register_add(OpRegistry& registry);
void register_cast(OpRegistry& registry);
void register_dimshuffle(OpRegistry& registry);
void register_dot(OpRegistry& registry);
void register_exp(OpRegistry& registry);
void register_ge(OpRegistry& registry);
void register_log(OpRegistry& registry);
void register_mean(OpRegistry& registry);
void register_mean_grad(OpRegistry& registry);
void register_maximum(OpRegistry& registry);
void register_mul(OpRegistry& registry);
void register_neg(OpRegistry& registry);
void register_second(OpRegistry& registry);
void register_sqr(OpRegistry& registry);
void register_sub(OpRegistry& registry);
void register_sum(OpRegistry& registry);
void register_true_div(OpRegistry& registry);

namespace {
void register_builtin_ops(OpRegistry& registry) {
  register_add(registry);
  register_cast(registry);
  register_dimshuffle(registry);
  register_dot(registry);
  register_exp(registry);
  register_ge(registry);
  register_log(registry);
  register_mean(registry);
  register_mean_grad(registry);
  register_maximum(registry);
  register_mul(registry);
  register_neg(registry);
  register_second(registry);
  register_sqr(registry);
  register_sub(registry);
  register_sum(registry);
  register_true_div(registry);
}
}  // namespace
}  // namespace ops

const OpRegistry& op_registry() {
  static const OpRegistry registry = [] {
    OpRegistry built;
    ops::register_builtin_ops(built);
    return built;
  }();
  return registry;
}

const OpDef& op_def(std::string_view name) { return op_registry().get(name); }

}  // namespace tscope
