// SPDX-License-Identifier: Apache-2.0
// Abs: |x|; the most negative integer wraps to itself, as in NumPy.
#include <cmath>
#include <concepts>

#include "elementwise_def.h"
#include "scalar_math.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kAbsScalar{.name = "abs_",
                              .arity = 1,
                              .flops_per_element = 1,
                              .transcendental = false,
                              .dtype_rule = ElementwiseDTypeRule::Promote};

struct AbsFn {
  template <class C>
  C operator()(C a) const {
    if constexpr (std::floating_point<C>) {
      return std::fabs(a);
    } else if constexpr (std::signed_integral<C>) {
      return a < 0 ? detail::wrapping_neg(a) : a;
    } else {
      return a;
    }
  }
};

std::vector<Variable> pullback_abs(const PullbackContext& ctx) {
  return {ctx.output_grads[0] * sgn(ctx.inputs[0])};
}
}  // namespace

void register_abs(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<AbsFn, 1>({.name = "Abs",
                                                       .summary = "|x|",
                                                       .scalar = &kAbsScalar,
                                                       .accepted = detail::DTypeSet::Numeric,
                                                       .pullback = pullback_abs}));
}

}  // namespace tscope::ops
