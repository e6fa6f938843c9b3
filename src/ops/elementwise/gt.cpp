// SPDX-License-Identifier: Apache-2.0
// GT: a > b as a bool tensor; inputs are promoted to a common dtype first. Zero gradient.
#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kGTScalar{.name = "gt",
                             .arity = 2,
                             .flops_per_element = 1,
                             .transcendental = false,
                             .dtype_rule = ElementwiseDTypeRule::Bool};

struct GTFn {
  template <class C>
  bool operator()(C a, C b) const {
    return a > b;
  }
};
}  // namespace

void register_gt(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<GTFn, 2>({.name = "GT",
                                                      .summary = "a > b (bool)",
                                                      .scalar = &kGTScalar,
                                                      .accepted = detail::DTypeSet::Any,
                                                      .zero_gradient = true}));
}

}  // namespace tscope::ops
