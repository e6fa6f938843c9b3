// SPDX-License-Identifier: Apache-2.0
// LE: a <= b as a bool tensor; inputs are promoted to a common dtype first. Zero gradient.
#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kLEScalar{.name = "le",
                             .arity = 2,
                             .flops_per_element = 1,
                             .transcendental = false,
                             .dtype_rule = ElementwiseDTypeRule::Bool};

struct LEFn {
  template <class C>
  bool operator()(C a, C b) const {
    return a <= b;
  }
};
}  // namespace

void register_le(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<LEFn, 2>({.name = "LE",
                                                      .summary = "a <= b (bool)",
                                                      .scalar = &kLEScalar,
                                                      .accepted = detail::DTypeSet::Any,
                                                      .zero_gradient = true}));
}

}  // namespace tscope::ops
