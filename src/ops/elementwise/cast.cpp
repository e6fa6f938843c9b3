// SPDX-License-Identifier: Apache-2.0
// Cast: elementwise conversion to the dtype attribute. Gradient casts back (zero for non-float).
#include "../broadcast_grad.h"
#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kCastScalar{.name = "cast",
                               .arity = 1,
                               .flops_per_element = 0,
                               .dtype_rule = ElementwiseDTypeRule::Explicit};

// The output dtype is the "dtype" attribute, not the functor's return type: the loop converts
// with static_cast as it stores each element.
struct CastFn {
  static constexpr bool kExplicitOutputDType = true;
  template <class C>
  C operator()(C a) const {
    return a;
  }
};

std::vector<Variable> pullback_cast(const PullbackContext& ctx) {
  const Variable& x = ctx.inputs[0];
  if (!is_floating(x.dtype()) || !is_floating(ctx.outputs[0].dtype())) return {Variable()};
  return {detail::cast_like(ctx.output_grads[0], x.dtype())};
}
}  // namespace

void register_cast(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<CastFn, 1>({.name = "Cast",
                                                        .summary = "conversion to another dtype",
                                                        .scalar = &kCastScalar,
                                                        .accepted = detail::DTypeSet::Any,
                                                        .pullback = pullback_cast}));
}

}  // namespace tscope::ops
