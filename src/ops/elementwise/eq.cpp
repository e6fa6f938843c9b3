// SPDX-License-Identifier: Apache-2.0
// EQ: a == b as a bool tensor; inputs are promoted to a common dtype first. Zero gradient.
#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kEQScalar{.name = "eq",
                             .arity = 2,
                             .flops_per_element = 1,
                             .transcendental = false,
                             .dtype_rule = ElementwiseDTypeRule::Bool};

struct EQFn {
  template <class C>
  bool operator()(C a, C b) const {
    return a == b;
  }
};
}  // namespace

void register_eq(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<EQFn, 2>({.name = "EQ",
                                                      .summary = "a == b (bool)",
                                                      .scalar = &kEQScalar,
                                                      .accepted = detail::DTypeSet::Any,
                                                      .zero_gradient = true,
                                                      .commutative = true}));
}

}  // namespace tscope::ops
