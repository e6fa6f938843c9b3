// SPDX-License-Identifier: Apache-2.0
// Log1p: log(1 + x), accurate for small x.
#include <cmath>
#include <concepts>

#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kLog1pScalar{.name = "log1p",
                                .arity = 1,
                                .flops_per_element = 1,
                                .transcendental = true,
                                .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct Log1pFn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return std::log1p(a); }
};

struct Log1pSimd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Log1p;
  static __m128d apply(__m128d x) { return Sleef_log1pd2_u10(x); }
  static __m128 apply(__m128 x) { return Sleef_log1pf4_u10(x); }
};

std::vector<Variable> pullback_log1p(const PullbackContext& ctx) {
  return {ctx.output_grads[0] / (ctx.inputs[0] + 1.0)};
}
}  // namespace

void register_log1p(OpRegistry& registry) {
  registry.add(
      detail::make_elementwise_def<Log1pFn, 1, Log1pSimd>({.name = "Log1p",
                                                           .summary = "log(1 + x)",
                                                           .scalar = &kLog1pScalar,
                                                           .accepted = detail::DTypeSet::Float,
                                                           .pullback = pullback_log1p}));
}

}  // namespace tscope::ops
