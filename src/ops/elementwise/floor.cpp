// SPDX-License-Identifier: Apache-2.0
// Floor: largest whole number <= x, in x's dtype. Zero gradient.
#include <cmath>
#include <concepts>

#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kFloorScalar{.name = "floor",
                                .arity = 1,
                                .flops_per_element = 1,
                                .transcendental = false,
                                .dtype_rule = ElementwiseDTypeRule::Promote};

struct FloorFn {
  template <class C>
  C operator()(C a) const {
    if constexpr (std::floating_point<C>) {
      return std::floor(a);
    } else {
      return a;  // integers are already whole
    }
  }
};
}  // namespace

void register_floor(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<FloorFn, 1>({.name = "Floor",
                                                         .summary = "round toward minus infinity",
                                                         .scalar = &kFloorScalar,
                                                         .accepted = detail::DTypeSet::Numeric,
                                                         .zero_gradient = true}));
}

}  // namespace tscope::ops
