// SPDX-License-Identifier: Apache-2.0
// IntDiv: a // b, floor division as in NumPy (rounds toward minus infinity, so -7 // 2 == -4).
// Integer division by zero gives 0 and INT_MIN // -1 wraps (scalar_math.h); floats give
// floor(a / b). Piecewise constant, so its gradient is zero.
#include "elementwise_def.h"
#include "scalar_math.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kIntDivScalar{.name = "int_div",
                                 .arity = 2,
                                 .flops_per_element = 1,
                                 .transcendental = false,
                                 .dtype_rule = ElementwiseDTypeRule::Promote};

struct IntDivFn {
  template <class C>
  C operator()(C a, C b) const {
    return detail::floor_div(a, b);
  }
};
}  // namespace

void register_int_div(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<IntDivFn, 2>(
      {.name = "IntDiv",
       .summary = "floor division a // b (integer x // 0 is 0)",
       .scalar = &kIntDivScalar,
       .accepted = detail::DTypeSet::Numeric,
       .zero_gradient = true}));
}

}  // namespace tscope::ops
