// SPDX-License-Identifier: Apache-2.0
// And: logical and as a bool tensor. Integer inputs count as true where nonzero
// (logical, not bitwise). Zero gradient.
#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kAndScalar{.name = "and_",
                              .arity = 2,
                              .flops_per_element = 1,
                              .transcendental = false,
                              .dtype_rule = ElementwiseDTypeRule::Bool};

struct AndFn {
  template <class C>
  bool operator()(C a, C b) const {
    return a != C{0} && b != C{0};
  }
};
}  // namespace

void register_and(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<AndFn, 2>({.name = "And",
                                                       .summary = "and (bool)",
                                                       .scalar = &kAndScalar,
                                                       .accepted = detail::DTypeSet::IntegralOrBool,
                                                       .zero_gradient = true,
                                                       .commutative = true}));
}

}  // namespace tscope::ops
