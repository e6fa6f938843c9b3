// SPDX-License-Identifier: Apache-2.0
// Minimum: the smaller of a and b; ties send the gradient to a, as in Theano.
#include "../broadcast_grad.h"
#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kMinimumScalar{.name = "minimum",
                                  .arity = 2,
                                  .flops_per_element = 1,
                                  .transcendental = false,
                                  .dtype_rule = ElementwiseDTypeRule::Promote};

struct MinimumFn {
  template <class C>
  C operator()(C a, C b) const {
    return b < a ? b : a;
  }
};

std::vector<Variable> pullback_minimum(const PullbackContext& ctx) {
  const Variable& g = ctx.output_grads[0];
  const Variable& a = ctx.inputs[0];
  const Variable& b = ctx.inputs[1];
  const Variable mask = cast(le(a, b), g.dtype());
  return {detail::sum_to_type(g * mask, a.type()), detail::sum_to_type(g * (1.0 - mask), b.type())};
}
}  // namespace

void register_minimum(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<MinimumFn, 2>({.name = "Minimum",
                                                           .summary = "smaller of a and b",
                                                           .scalar = &kMinimumScalar,
                                                           .accepted = detail::DTypeSet::Numeric,
                                                           .pullback = pullback_minimum,
                                                           .commutative = true}));
}

}  // namespace tscope::ops
