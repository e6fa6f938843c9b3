// SPDX-License-Identifier: Apache-2.0
// Round: nearest whole number, ties to even (NumPy's round and Theano's
// round_half_to_even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0). Chosen over half-away-from-zero
// because it has no upward bias when summing rounded values. Zero gradient.
#include <cmath>
#include <concepts>

#include "elementwise_def.h"
#include "scalar_math.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kRoundScalar{.name = "round_half_to_even",
                                .arity = 1,
                                .flops_per_element = 1,
                                .transcendental = false,
                                .dtype_rule = ElementwiseDTypeRule::Promote};

struct RoundFn {
  template <class C>
  C operator()(C a) const {
    if constexpr (std::floating_point<C>) {
      return detail::round_half_to_even(a);
    } else {
      return a;  // integers are already whole
    }
  }
};
}  // namespace

void register_round(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<RoundFn, 1>({.name = "Round",
                                                         .summary = "round half to even",
                                                         .scalar = &kRoundScalar,
                                                         .accepted = detail::DTypeSet::Numeric,
                                                         .zero_gradient = true}));
}

}  // namespace tscope::ops
