// SPDX-License-Identifier: Apache-2.0
// Exp: elementwise exp.
#include "../broadcast_grad.h"
#include <cmath>

#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kExpScalar{.name = "exp", .arity = 1, .flops_per_element = 1,
                             .transcendental = true, .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct ExpFn {
  template <class C>
    requires std::floating_point<C>
  C operator()(C a) const { return std::exp(a); }
};

std::vector<Variable> pullback_exp(const PullbackContext& ctx) {
  return {ctx.output_grads[0] * ctx.outputs[0]};
}
}  // namespace

void register_exp(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<ExpFn, 1>({.name = "Exp",
                                                       .summary = "e to the power x",
                                                       .scalar = &kExpScalar,
                                                       .accepted = detail::DTypeSet::Float,
                                                       .pullback = pullback_exp,
                                                       .commutative = false}));
}

}  // namespace tscope::ops
