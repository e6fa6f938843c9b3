// SPDX-License-Identifier: Apache-2.0
// Second: second(a, b) is b broadcast to the shape of a broadcast with b (Theano's fill/second).
#include "../broadcast_grad.h"
#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kSecondScalar{.name = "second",
                                 .arity = 2,
                                 .flops_per_element = 0,
                                 .dtype_rule = ElementwiseDTypeRule::Promote};
struct SecondFn {
  template <class C>
  C operator()(C /*shape_only*/, C value) const {
    return value;
  }
};

std::vector<Variable> pullback_second(const PullbackContext& ctx) {
  return {Variable(), detail::sum_to_type(ctx.output_grads[0], ctx.inputs[1].type())};
}
}  // namespace

void register_second(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<SecondFn, 2>({.name = "Second",
                                                          .summary = "b broadcast to a's shape",
                                                          .scalar = &kSecondScalar,
                                                          .accepted = detail::DTypeSet::Any,
                                                          .pullback = pullback_second}));
}

}  // namespace tscope::ops
