// SPDX-License-Identifier: Apache-2.0
// Not: logical not as a bool tensor. Integer inputs count as true where nonzero
// (logical, not bitwise). Zero gradient.
#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kNotScalar{.name = "invert",
                              .arity = 1,
                              .flops_per_element = 1,
                              .transcendental = false,
                              .dtype_rule = ElementwiseDTypeRule::Bool};

struct NotFn {
  template <class C>
  bool operator()(C a) const {
    return a == C{0};
  }
};
}  // namespace

void register_not(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<NotFn, 1>({.name = "Not",
                                                       .summary = "not (bool)",
                                                       .scalar = &kNotScalar,
                                                       .accepted = detail::DTypeSet::IntegralOrBool,
                                                       .zero_gradient = true}));
}

}  // namespace tscope::ops
