// SPDX-License-Identifier: Apache-2.0
// Neg: -x; the most negative integer wraps to itself.
#include "elementwise_def.h"
#include "scalar_math.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kNegScalar{.name = "neg",
                              .arity = 1,
                              .flops_per_element = 1,
                              .transcendental = false,
                              .dtype_rule = ElementwiseDTypeRule::Promote};

struct NegFn {
  template <class C>
  C operator()(C a) const {
    return detail::wrapping_neg(a);
  }
};

std::vector<Variable> pullback_neg(const PullbackContext& ctx) {
  return {neg(ctx.output_grads[0])};
}
}  // namespace

void register_neg(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<NegFn, 1>({.name = "Neg",
                                                       .summary = "-x",
                                                       .scalar = &kNegScalar,
                                                       .accepted = detail::DTypeSet::Numeric,
                                                       .pullback = pullback_neg}));
}

}  // namespace tscope::ops
