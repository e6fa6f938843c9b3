// SPDX-License-Identifier: Apache-2.0
// Switch: a where condition is true, else b, broadcasting all three.
// The condition must be bool (build it with a comparison); only a and b take part in dtype
// promotion. The condition gets no gradient; a and b get the gradient where they were chosen.
#include "../broadcast_grad.h"
#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kSwitchScalar{.name = "switch",
                                 .arity = 3,
                                 .flops_per_element = 1,
                                 .transcendental = false,
                                 .dtype_rule = ElementwiseDTypeRule::Promote};

struct SwitchFn {
  template <class C>
  C operator()(C condition, C a, C b) const {
    return condition != C{0} ? a : b;
  }
};

std::vector<Variable> pullback_switch(const PullbackContext& ctx) {
  const Variable& g = ctx.output_grads[0];
  const Variable& a = ctx.inputs[1];
  const Variable& b = ctx.inputs[2];
  const Variable chosen = cast(ctx.inputs[0], g.dtype());
  return {Variable(), detail::sum_to_type(g * chosen, a.type()),
          detail::sum_to_type(g * (1.0 - chosen), b.type())};
}

std::vector<Type> infer_switch(const InferContext& ctx) {
  const Variable& condition = ctx.inputs[0];
  if (condition.dtype() != DType::Bool) {
    // Converting a non-bool condition to the branches' dtype could turn 0.5 into 0.
    throw_error(ErrorKind::TypeMismatch,
                "switch needs a bool condition; '{}' is {} (compare it, e.g. neq(c, 0))",
                condition.to_string(), dtype_name(condition.dtype()));
  }
  return detail::infer_elementwise(ctx, detail::DTypeSet::Any);
}
}  // namespace

void register_switch(OpRegistry& registry) {
  OpDef def = detail::make_elementwise_def<SwitchFn, 3>({.name = "Switch",
                                                         .summary = "a where condition, else b",
                                                         .scalar = &kSwitchScalar,
                                                         .accepted = detail::DTypeSet::Any,
                                                         .pullback = pullback_switch});
  def.infer = infer_switch;
  registry.add(std::move(def));
}

}  // namespace tscope::ops
