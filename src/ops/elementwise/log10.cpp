// SPDX-License-Identifier: Apache-2.0
// Log10: base-10 logarithm.
#include <cmath>
#include <concepts>
#include <numbers>

#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kLog10Scalar{.name = "log10",
                                .arity = 1,
                                .flops_per_element = 1,
                                .transcendental = true,
                                .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct Log10Fn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return std::log10(a); }
};

struct Log10Simd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Log10;
  static __m128d apply(__m128d x) { return Sleef_log10d2_u10(x); }
  static __m128 apply(__m128 x) { return Sleef_log10f4_u10(x); }
};

std::vector<Variable> pullback_log10(const PullbackContext& ctx) {
  return {ctx.output_grads[0] / (ctx.inputs[0] * std::numbers::ln10)};
}
}  // namespace

void register_log10(OpRegistry& registry) {
  registry.add(
      detail::make_elementwise_def<Log10Fn, 1, Log10Simd>({.name = "Log10",
                                                           .summary = "base-10 logarithm",
                                                           .scalar = &kLog10Scalar,
                                                           .accepted = detail::DTypeSet::Float,
                                                           .pullback = pullback_log10}));
}

}  // namespace tscope::ops
