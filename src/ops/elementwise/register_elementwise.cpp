// SPDX-License-Identifier: Apache-2.0
// The elementwise ops: one declaration and one call per op, sorted.
#include "tscope/graph/op_registry.h"

namespace tscope::ops {

void register_abs(OpRegistry& registry);
void register_add(OpRegistry& registry);
void register_and(OpRegistry& registry);
void register_cast(OpRegistry& registry);
void register_ceil(OpRegistry& registry);
void register_clip(OpRegistry& registry);
void register_composite(OpRegistry& registry);
void register_cos(OpRegistry& registry);
void register_eq(OpRegistry& registry);
void register_erf(OpRegistry& registry);
void register_exp(OpRegistry& registry);
void register_exp2(OpRegistry& registry);
void register_expm1(OpRegistry& registry);
void register_floor(OpRegistry& registry);
void register_ge(OpRegistry& registry);
void register_gt(OpRegistry& registry);
void register_int_div(OpRegistry& registry);
void register_le(OpRegistry& registry);
void register_log(OpRegistry& registry);
void register_log10(OpRegistry& registry);
void register_log1p(OpRegistry& registry);
void register_log2(OpRegistry& registry);
void register_lt(OpRegistry& registry);
void register_maximum(OpRegistry& registry);
void register_minimum(OpRegistry& registry);
void register_mod(OpRegistry& registry);
void register_mul(OpRegistry& registry);
void register_neg(OpRegistry& registry);
void register_neq(OpRegistry& registry);
void register_not(OpRegistry& registry);
void register_or(OpRegistry& registry);
void register_pow(OpRegistry& registry);
void register_reciprocal(OpRegistry& registry);
void register_round(OpRegistry& registry);
void register_second(OpRegistry& registry);
void register_sgn(OpRegistry& registry);
void register_sigmoid(OpRegistry& registry);
void register_sin(OpRegistry& registry);
void register_softplus(OpRegistry& registry);
void register_sqr(OpRegistry& registry);
void register_sqrt(OpRegistry& registry);
void register_sub(OpRegistry& registry);
void register_switch(OpRegistry& registry);
void register_tanh(OpRegistry& registry);
void register_true_div(OpRegistry& registry);
void register_xor(OpRegistry& registry);

void register_elementwise_ops(OpRegistry& registry) {
  register_abs(registry);
  register_add(registry);
  register_and(registry);
  register_cast(registry);
  register_ceil(registry);
  register_clip(registry);
  register_composite(registry);
  register_cos(registry);
  register_eq(registry);
  register_erf(registry);
  register_exp(registry);
  register_exp2(registry);
  register_expm1(registry);
  register_floor(registry);
  register_ge(registry);
  register_gt(registry);
  register_int_div(registry);
  register_le(registry);
  register_log(registry);
  register_log10(registry);
  register_log1p(registry);
  register_log2(registry);
  register_lt(registry);
  register_maximum(registry);
  register_minimum(registry);
  register_mod(registry);
  register_mul(registry);
  register_neg(registry);
  register_neq(registry);
  register_not(registry);
  register_or(registry);
  register_pow(registry);
  register_reciprocal(registry);
  register_round(registry);
  register_second(registry);
  register_sgn(registry);
  register_sigmoid(registry);
  register_sin(registry);
  register_softplus(registry);
  register_sqr(registry);
  register_sqrt(registry);
  register_sub(registry);
  register_switch(registry);
  register_tanh(registry);
  register_true_div(registry);
  register_xor(registry);
}

}  // namespace tscope::ops
