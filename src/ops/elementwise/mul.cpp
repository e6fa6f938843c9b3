// SPDX-License-Identifier: Apache-2.0
// Mul: a * b with NumPy broadcasting; integer overflow wraps.
#include "../broadcast_grad.h"
#include "elementwise_def.h"
#include "scalar_math.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kMulScalar{.name = "mul",
                              .arity = 2,
                              .flops_per_element = 1,
                              .transcendental = false,
                              .dtype_rule = ElementwiseDTypeRule::Promote};

struct MulFn {
  template <class C>
  C operator()(C a, C b) const {
    return detail::wrapping_mul(a, b);
  }
};

std::vector<Variable> pullback_mul(const PullbackContext& ctx) {
  const Variable& g = ctx.output_grads[0];
  return {detail::sum_to_type(g * ctx.inputs[1], ctx.inputs[0].type()),
          detail::sum_to_type(g * ctx.inputs[0], ctx.inputs[1].type())};
}
}  // namespace

void register_mul(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<MulFn, 2>({.name = "Mul",
                                                       .summary = "a * b, broadcasting",
                                                       .scalar = &kMulScalar,
                                                       .accepted = detail::DTypeSet::Numeric,
                                                       .pullback = pullback_mul,
                                                       .commutative = true}));
}

}  // namespace tscope::ops
