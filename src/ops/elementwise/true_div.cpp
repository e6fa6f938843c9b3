// SPDX-License-Identifier: Apache-2.0
// TrueDiv: a / b in floating point (integers are promoted first); x / 0 follows IEEE.
#include <concepts>

#include "../broadcast_grad.h"
#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kTrueDivScalar{.name = "true_div",
                                  .arity = 2,
                                  .flops_per_element = 1,
                                  .transcendental = false,
                                  .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct TrueDivFn {
  template <class C>
  requires std::floating_point<C> C operator()(C a, C b) const { return a / b; }
};

std::vector<Variable> pullback_true_div(const PullbackContext& ctx) {
  const Variable& g = ctx.output_grads[0];
  const Variable& a = ctx.inputs[0];
  const Variable& b = ctx.inputs[1];
  return {detail::sum_to_type(g / b, a.type()),
          detail::sum_to_type(neg(g * ctx.outputs[0] / b), b.type())};
}
}  // namespace

void register_true_div(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<TrueDivFn, 2>({.name = "TrueDiv",
                                                           .summary = "a / b in floating point",
                                                           .scalar = &kTrueDivScalar,
                                                           .accepted = detail::DTypeSet::Float,
                                                           .pullback = pullback_true_div}));
}

}  // namespace tscope::ops
