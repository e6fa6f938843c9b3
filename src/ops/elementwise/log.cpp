// SPDX-License-Identifier: Apache-2.0
// Log: elementwise log.
#include "../broadcast_grad.h"
#include <cmath>

#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kLogScalar{.name = "log", .arity = 1, .flops_per_element = 1,
                             .transcendental = true, .dtype_rule = ElementwiseDTypeRule::PromoteToFloat};

struct LogFn {
  template <class C>
    requires std::floating_point<C>
  C operator()(C a) const { return std::log(a); }
};

std::vector<Variable> pullback_log(const PullbackContext& ctx) {
  return {ctx.output_grads[0] / ctx.inputs[0]};
}
}  // namespace

void register_log(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<LogFn, 1>({.name = "Log",
                                                       .summary = "natural logarithm",
                                                       .scalar = &kLogScalar,
                                                       .accepted = detail::DTypeSet::Float,
                                                       .pullback = pullback_log,
                                                       .commutative = false}));
}

}  // namespace tscope::ops
