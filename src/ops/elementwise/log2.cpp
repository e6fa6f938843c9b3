// SPDX-License-Identifier: Apache-2.0
// Log2: base-2 logarithm.
#include <cmath>
#include <concepts>
#include <numbers>

#include "simd_loop.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kLog2Scalar{.name = "log2",
                               .arity = 1,
                               .flops_per_element = 1,
                               .transcendental = true,
                               .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct Log2Fn {
  template <class C>
  requires std::floating_point<C> C operator()(C a) const { return std::log2(a); }
};

struct Log2Simd {
  static constexpr detail::WideUnary kWide = detail::WideUnary::Log2;
  static __m128d apply(__m128d x) { return Sleef_log2d2_u10(x); }
  static __m128 apply(__m128 x) { return Sleef_log2f4_u10(x); }
};

std::vector<Variable> pullback_log2(const PullbackContext& ctx) {
  return {ctx.output_grads[0] / (ctx.inputs[0] * std::numbers::ln2)};
}
}  // namespace

void register_log2(OpRegistry& registry) {
  registry.add(
      detail::make_elementwise_def<Log2Fn, 1, Log2Simd>({.name = "Log2",
                                                         .summary = "base-2 logarithm",
                                                         .scalar = &kLog2Scalar,
                                                         .accepted = detail::DTypeSet::Float,
                                                         .pullback = pullback_log2}));
}

}  // namespace tscope::ops
