// SPDX-License-Identifier: Apache-2.0
// Sgn: sign of x: -1, 0 or 1 in x's dtype (nan stays nan). Zero gradient.
#include <type_traits>

#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
constexpr ScalarOp kSgnScalar{.name = "sgn",
                              .arity = 1,
                              .flops_per_element = 1,
                              .transcendental = false,
                              .dtype_rule = ElementwiseDTypeRule::Promote};

struct SgnFn {
  template <class C>
  C operator()(C a) const {
    if (a > C{0}) return C{1};
    if constexpr (std::is_signed_v<C>) {
      if (a < C{0}) return C{-1};
    }
    return a;  // zero, or nan
  }
};
}  // namespace

void register_sgn(OpRegistry& registry) {
  registry.add(detail::make_elementwise_def<SgnFn, 1>({.name = "Sgn",
                                                       .summary = "sign of x (-1, 0, 1)",
                                                       .scalar = &kSgnScalar,
                                                       .accepted = detail::DTypeSet::Numeric,
                                                       .zero_gradient = true}));
}

}  // namespace tscope::ops
