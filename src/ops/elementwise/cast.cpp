// SPDX-License-Identifier: Apache-2.0
// Cast: elementwise conversion to the dtype attribute. Gradient casts back (zero for non-float).
#include <algorithm>

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

// Inside a Composite every value has the Composite's float type, and the fusion rule admits only
// a Cast to that type (of a comparison's 1 or 0), so there the Cast is the identity.
template <class C>
void identity_block_kernel(const C* const* args, C* out, std::int64_t n) {
  std::copy(args[0], args[0] + n, out);
}

std::vector<Variable> pullback_cast(const PullbackContext& ctx) {
  const Variable& x = ctx.inputs[0];
  if (!is_floating(x.dtype()) || !is_floating(ctx.outputs[0].dtype())) return {Variable()};
  return {detail::cast_like(ctx.output_grads[0], x.dtype())};
}
}  // namespace

void register_cast(OpRegistry& registry) {
  OpDef def = detail::make_elementwise_def<CastFn, 1>({.name = "Cast",
                                                       .summary = "conversion to another dtype",
                                                       .scalar = &kCastScalar,
                                                       .accepted = detail::DTypeSet::Any,
                                                       .pullback = pullback_cast});
  def.block = {identity_block_kernel<float>, identity_block_kernel<double>};
  registry.add(std::move(def));
}

}  // namespace tscope::ops
