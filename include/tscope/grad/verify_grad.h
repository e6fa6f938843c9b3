// SPDX-License-Identifier: Apache-2.0
#pragma once
/// verify_grad: checks symbolic gradients against central finite differences (Theano's
/// verify_grad). The cost is sum(f(inputs) * R) for a fixed random R, so every output element
/// contributes with a distinct weight.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tscope/core/tensor.h"
#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

struct VerifyGradOptions {
  double eps = 1e-6;  ///< finite-difference step (use float64 points)
  double rtol = 1e-4;
  double atol = 1e-6;
  std::uint64_t seed = 1234;
  /// Indices of the inputs to differentiate; empty: every floating-point input.
  std::vector<int> wrt;
};

struct VerifyGradResult {
  bool ok = true;
  double max_abs_error = 0;
  double max_rel_error = 0;
  std::string message;  ///< on failure: input, element, analytic and numeric values
};

/// Builds f with one input Variable per point (its type has the point's dtype and exact dims, so
/// static broadcasting is exercised), compiles f, its cost and its gradients, and compares.
[[nodiscard]] VerifyGradResult verify_grad(
    const std::function<Variable(const std::vector<Variable>&)>& build,
    const std::vector<Tensor>& point, const VerifyGradOptions& options = {});

}  // namespace tscope

#pragma GCC visibility pop
