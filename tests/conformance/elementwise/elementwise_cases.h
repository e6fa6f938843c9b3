// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one table of elementwise op cases. The forward, gradient and coverage tests all read it, so
// an op added to the registry without a row here fails the coverage test.
#include <string>
#include <utility>
#include <vector>

#include "support/test_util.h"

namespace tscope::testing {

/// Values drawn for one input: uniform in [low, high) (integers rounded, bool is value > 0).
struct Domain {
  double low = -1.0;
  double high = 1.0;
};

struct ElementwiseCase {
  std::string op;  ///< registry name
  int arity = 1;
  /// Input dtypes exercised by the forward test (every input gets the same dtype, except a bool
  /// condition, see below).
  std::vector<DType> dtypes;
  /// Forward domain per input; one entry applies to every input.
  std::vector<Domain> domains = {Domain{}};
  /// Gradient domain per input (float64 points), away from kinks and outside-domain values.
  std::vector<Domain> grad_domains = {Domain{}};
  /// Switch: input 0 is a bool condition whatever the case's dtype.
  bool bool_condition = false;
};

/// Every elementwise op and how to exercise it.
const std::vector<ElementwiseCase>& elementwise_cases();

/// The case of `op`, or nullptr.
const ElementwiseCase* find_elementwise_case(const std::string& op);

/// Builds the op on `inputs` (Cast converts float to int32 and other dtypes to float64).
Variable build_elementwise(const ElementwiseCase& c, const std::vector<Variable>& inputs);

/// The domain of input `index` in `domains`, narrowed to what `dtype` can hold.
Domain domain_for(const std::vector<Domain>& domains, int index, DType dtype);

/// The dtype input `index` gets when the case runs at `dtype`.
DType input_dtype(const ElementwiseCase& c, int index, DType dtype);

}  // namespace tscope::testing
