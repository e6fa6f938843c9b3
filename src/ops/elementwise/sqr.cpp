// SPDX-License-Identifier: Apache-2.0
// Sqr: x * x; integer overflow wraps.
#include "elementwise_def.h"
#include "scalar_math.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kSqrScalar{.name = "sqr",
                              .arity = 1,
                              .flops_per_element = 1,
                              .transcendental = false,
                              .dtype_rule = ElementwiseDTypeRule::Promote};

struct SqrFn {
  template <class C>
  C operator()(C a) const {
    return detail::wrapping_mul(a, a);
  }
};

std::vector<Variable> pullback_sqr(const PullbackContext& ctx) {
  return {ctx.output_grads[0] * (2.0 * ctx.inputs[0])};
}
}  // namespace

void register_sqr(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<SqrFn, 1>({.name = "Sqr",
                                                       .summary = "x * x",
                                                       .scalar = &kSqrScalar,
                                                       .accepted = detail::DTypeSet::Numeric,
                                                       .pullback = pullback_sqr}));
}

}  // namespace tscope::ops
