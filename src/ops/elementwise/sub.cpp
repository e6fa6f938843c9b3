// SPDX-License-Identifier: Apache-2.0
// Sub: a - b with NumPy broadcasting; integer overflow wraps.
#include "../broadcast_grad.h"
#include "elementwise_def.h"
#include "scalar_math.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kSubScalar{.name = "sub",
                              .arity = 2,
                              .flops_per_element = 1,
                              .transcendental = false,
                              .dtype_rule = ElementwiseDTypeRule::Promote};

struct SubFn {
  template <class C>
  C operator()(C a, C b) const {
    return detail::wrapping_sub(a, b);
  }
};

std::vector<Variable> pullback_sub(const PullbackContext& ctx) {
  const Variable& g = ctx.output_grads[0];
  return {detail::sum_to_type(g, ctx.inputs[0].type()),
          detail::sum_to_type(neg(g), ctx.inputs[1].type())};
}
}  // namespace

void register_sub(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<SubFn, 2>({.name = "Sub",
                                                       .summary = "a - b, broadcasting",
                                                       .scalar = &kSubScalar,
                                                       .accepted = detail::DTypeSet::Numeric,
                                                       .pullback = pullback_sub}));
}

}  // namespace tscope::ops
