// SPDX-License-Identifier: Apache-2.0
// Log: natural logarithm; log(0) = -inf, log(x < 0) = nan.
#include <cmath>
#include <concepts>

#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kLogScalar{.name = "log",
                              .arity = 1,
                              .flops_per_element = 1,
                              .transcendental = true,
                              .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct LogFn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return std::log(a); }
};

struct LogSimd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Log;
  static __m128d apply(__m128d x) { return Sleef_logd2_u10(x); }
  static __m128 apply(__m128 x) { return Sleef_logf4_u10(x); }
};

std::vector<Variable> pullback_log(const PullbackContext& ctx) {
  return {ctx.output_grads[0] / ctx.inputs[0]};
}
}  // namespace

void register_log(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<LogFn, 1, LogSimd>({.name = "Log",
                                                                .summary = "natural logarithm",
                                                                .scalar = &kLogScalar,
                                                                .accepted = detail::DTypeSet::Float,
                                                                .pullback = pullback_log}));
}

}  // namespace tscope::ops
