// SPDX-License-Identifier: Apache-2.0
// Mod: a % b with the sign of the divisor, as in NumPy and Python (-7 % 3 == 2, 7 % -3 == -2).
// Integer x % 0 gives 0 (scalar_math.h); float x % 0 is nan.
#include "../broadcast_grad.h"
#include "elementwise_def.h"
#include "scalar_math.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kModScalar{.name = "mod",
                              .arity = 2,
                              .flops_per_element = 1,
                              .transcendental = false,
                              .dtype_rule = ElementwiseDTypeRule::Promote};

struct ModFn {
  template <class C>
  C operator()(C a, C b) const {
    return detail::floor_mod(a, b);
  }
};

std::vector<Variable> pullback_mod(const PullbackContext& ctx) {
  // mod(a, b) = a - floor(a / b) * b, and floor is locally constant.
  const Variable& g = ctx.output_grads[0];
  const Variable& a = ctx.inputs[0];
  const Variable& b = ctx.inputs[1];
  return {detail::sum_to_type(g, a.type()), detail::sum_to_type(neg(g * int_div(a, b)), b.type())};
}
}  // namespace

void register_mod(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<ModFn, 2>(
      {.name = "Mod",
       .summary = "remainder with the sign of the divisor (integer x % 0 is 0)",
       .scalar = &kModScalar,
       .accepted = detail::DTypeSet::Numeric,
       .pullback = pullback_mod}));
}

}  // namespace tscope::ops
