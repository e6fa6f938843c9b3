// SPDX-License-Identifier: Apache-2.0
// Add: a + b with NumPy broadcasting; integer overflow wraps.
#include "../broadcast_grad.h"
#include "elementwise_def.h"
#include "scalar_math.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kAddScalar{.name = "add",
                              .arity = 2,
                              .flops_per_element = 1,
                              .transcendental = false,
                              .dtype_rule = ElementwiseDTypeRule::Promote};

struct AddFn {
  template <class C>
  C operator()(C a, C b) const {
    return detail::wrapping_add(a, b);
  }
};

std::vector<Variable> pullback_add(const PullbackContext& ctx) {
  const Variable& g = ctx.output_grads[0];
  return {detail::sum_to_type(g, ctx.inputs[0].type()),
          detail::sum_to_type(g, ctx.inputs[1].type())};
}
}  // namespace

void register_add(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<AddFn, 2>({.name = "Add",
                                                       .summary = "a + b, broadcasting",
                                                       .scalar = &kAddScalar,
                                                       .accepted = detail::DTypeSet::Numeric,
                                                       .pullback = pullback_add,
                                                       .commutative = true}));
}

}  // namespace tscope::ops
