// SPDX-License-Identifier: Apache-2.0
// Clip: clip(x, low, high) = min(max(x, low), high), as NumPy (high wins when low > high).
// The gradient goes to whichever operand the output equals; ties at a bound go to x.
#include "../broadcast_grad.h"
#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kClipScalar{.name = "clip",
                               .arity = 3,
                               .flops_per_element = 1,
                               .transcendental = false,
                               .dtype_rule = ElementwiseDTypeRule::Promote};

struct ClipFn {
  template <class C>
  C operator()(C x, C low, C high) const {
    const C raised = x < low ? low : x;
    return high < raised ? high : raised;
  }
};

std::vector<Variable> pullback_clip(const PullbackContext& ctx) {
  const Variable& g = ctx.output_grads[0];
  const Variable& x = ctx.inputs[0];
  const Variable& low = ctx.inputs[1];
  const Variable& high = ctx.inputs[2];
  const Variable above = cast(gt(maximum(x, low), high), g.dtype());
  const Variable not_above = 1.0 - above;
  return {detail::sum_to_type(g * cast(ge(x, low), g.dtype()) * not_above, x.type()),
          detail::sum_to_type(g * cast(lt(x, low), g.dtype()) * not_above, low.type()),
          detail::sum_to_type(g * above, high.type())};
}
}  // namespace

void register_clip(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<ClipFn, 3>({.name = "Clip",
                                                        .summary = "x limited to [low, high]",
                                                        .scalar = &kClipScalar,
                                                        .accepted = detail::DTypeSet::Numeric,
                                                        .pullback = pullback_clip}));
}

}  // namespace tscope::ops
