// SPDX-License-Identifier: Apache-2.0
// Reciprocal: 1 / x in floating point (Theano's inv); 1 / 0 is inf.
#include <concepts>

#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kReciprocalScalar{.name = "inv",
                                     .arity = 1,
                                     .flops_per_element = 1,
                                     .transcendental = false,
                                     .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct ReciprocalFn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return C{1} / a; }
};

std::vector<Variable> pullback_reciprocal(const PullbackContext& ctx) {
  return {neg(ctx.output_grads[0] * sqr(ctx.outputs[0]))};
}
}  // namespace

void register_reciprocal(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<ReciprocalFn, 1>({.name = "Reciprocal",
                                                              .summary = "1 / x (Theano's inv)",
                                                              .scalar = &kReciprocalScalar,
                                                              .accepted = detail::DTypeSet::Float,
                                                              .pullback = pullback_reciprocal}));
}

}  // namespace tscope::ops
