// SPDX-License-Identifier: Apache-2.0
// Ceil: smallest whole number >= x, in x's dtype. Zero gradient.
#include <cmath>
#include <concepts>

#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kCeilScalar{.name = "ceil",
                               .arity = 1,
                               .flops_per_element = 1,
                               .transcendental = false,
                               .dtype_rule = ElementwiseDTypeRule::Promote};

struct CeilFn {
  template <class C>
  C operator()(C a) const {
    if constexpr (std::floating_point<C>) {
      return std::ceil(a);
    } else {
      return a;  // integers are already whole
    }
  }
};
}  // namespace

void register_ceil(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<CeilFn, 1>({.name = "Ceil",
                                                        .summary = "round toward plus infinity",
                                                        .scalar = &kCeilScalar,
                                                        .accepted = detail::DTypeSet::Numeric,
                                                        .zero_gradient = true}));
}

}  // namespace tscope::ops
