// SPDX-License-Identifier: Apache-2.0
// Pow: a to the power b in floating point (integers are promoted first). The gradient with
// respect to b is out * log(a), defined for a > 0.
#include <cmath>
#include <concepts>

#include "../broadcast_grad.h"
#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kPowScalar{.name = "pow",
                              .arity = 2,
                              .flops_per_element = 1,
                              .transcendental = true,
                              .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct PowFn {
  template <class C>
  requires std::floating_point<C> C operator()(C a, C b) const { return std::pow(a, b); }
};

struct PowSimd {
  static __m128d apply(__m128d a, __m128d b) { return Sleef_powd2_u10(a, b); }
  static __m128 apply(__m128 a, __m128 b) { return Sleef_powf4_u10(a, b); }
};

std::vector<Variable> pullback_pow(const PullbackContext& ctx) {
  const Variable& g = ctx.output_grads[0];
  const Variable& a = ctx.inputs[0];
  const Variable& b = ctx.inputs[1];
  return {detail::sum_to_type(g * b * pow(a, b - 1.0), a.type()),
          detail::sum_to_type(g * ctx.outputs[0] * log(a), b.type())};
}
}  // namespace

void register_pow(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<PowFn, 2, PowSimd>({.name = "Pow",
                                                                .summary = "a to the power b",
                                                                .scalar = &kPowScalar,
                                                                .accepted = detail::DTypeSet::Float,
                                                                .pullback = pullback_pow}));
}

}  // namespace tscope::ops
