// SPDX-License-Identifier: Apache-2.0
// NEQ: a != b as a bool tensor; inputs are promoted to a common dtype first. Zero gradient.
#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kNEQScalar{.name = "neq",
                              .arity = 2,
                              .flops_per_element = 1,
                              .transcendental = false,
                              .dtype_rule = ElementwiseDTypeRule::Bool};

struct NEQFn {
  template <class C>
  bool operator()(C a, C b) const {
    return a != b;
  }
};
}  // namespace

void register_neq(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<NEQFn, 2>({.name = "NEQ",
                                                       .summary = "a != b (bool)",
                                                       .scalar = &kNEQScalar,
                                                       .accepted = detail::DTypeSet::Any,
                                                       .zero_gradient = true,
                                                       .commutative = true}));
}

}  // namespace tscope::ops
