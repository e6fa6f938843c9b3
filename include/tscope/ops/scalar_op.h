// SPDX-License-Identifier: Apache-2.0
#pragma once
/// A scalar op lifted to tensors by an elementwise OpDef. The fusion rewrite builds fused loops
/// from these; the profiler's tips read `transcendental`.
#include <string_view>

#pragma GCC visibility push(default)

namespace tscope {

/// How an elementwise op's output dtype follows from its inputs.
enum class ElementwiseDTypeRule {
  Promote,         ///< promote_types over the inputs (add, mul, maximum, ...)
  PromoteToFloat,  ///< like Promote, then integers become float (exp, true_div, ...)
  Bool,            ///< comparisons and logic: bool output, inputs promoted
  Explicit,        ///< output dtype from the "dtype" attribute (cast)
};

struct ScalarOp {
  std::string_view name;  ///< Theano spelling: "add", "exp", "true_div"
  int arity = 1;
  double flops_per_element = 1;
  bool transcendental = false;  ///< exp/log/tanh/...: worth a vectorised math library
  ElementwiseDTypeRule dtype_rule = ElementwiseDTypeRule::Promote;
};

}  // namespace tscope

#pragma GCC visibility pop
