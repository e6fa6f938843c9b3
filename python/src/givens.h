// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Theano's `givens`: the outputs and update values of a function to be compiled, with some
/// Variables replaced by others before compiling. The nodes between a replaced Variable and the
/// outputs are rebuilt (same op, attributes and creation site); the user's graph is unchanged.
#include <utility>
#include <vector>

#include "tscope/runtime/function.h"

namespace tscope::python {

struct GivenGraph {
  std::vector<Variable> outputs;
  std::vector<Update> updates;
};

/// Throws InvalidArgument naming a key that no output or update value depends on, TypeMismatch
/// when a replacement's dtype or rank differs from its key's.
[[nodiscard]] GivenGraph apply_givens(const std::vector<Variable>& outputs,
                                      const std::vector<Update>& updates,
                                      const std::vector<std::pair<Variable, Variable>>& givens);

}  // namespace tscope::python
