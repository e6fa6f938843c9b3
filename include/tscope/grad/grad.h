// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Reverse-mode differentiation over the op registry's pullbacks.
///
///   Variable cost = mean(sqr(dot(x, w) - y));
///   auto [gw] = grad(cost, {w});     // symbolic: a Variable in the same graph
#include <source_location>
#include <vector>

#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

/// What grad() does with a `wrt` that `cost` does not depend on.
enum class DisconnectedPolicy { Raise, Zero };

struct GradOptions {
  DisconnectedPolicy disconnected = DisconnectedPolicy::Raise;
  /// Treated as constants (Theano's consider_constant): no gradient flows through them to what
  /// they are computed from. A wrt listed here is disconnected.
  std::vector<Variable> consider_constant;
};

/// Gradients of the scalar `cost` with respect to each of `wrt`. Nodes created carry the forward
/// node's creation site and the user op "grad(<op>)". Throws TypeMismatch when cost is not a
/// floating scalar, NotDifferentiable naming the node when an op on the path has no gradient,
/// InvalidArgument when a wrt is disconnected and the policy is Raise.
[[nodiscard]] std::vector<Variable> grad(const Variable& cost, const std::vector<Variable>& wrt,
                                         const GradOptions& options = {},
                                         const std::source_location& location =
                                             std::source_location::current());

/// Vector-Jacobian products (Theano's known_grads): the gradients of each of `wrt` given the
/// gradient of each of `outputs` (an undefined one means zero; at least one must be defined).
/// A loop's gradient uses it for its body. Throws as grad() does, and ShapeMismatch-free:
/// `output_grads[i]` must have the dtype and rank of `outputs[i]` (TypeMismatch otherwise).
[[nodiscard]] std::vector<Variable> grad_of_outputs(
    const std::vector<Variable>& outputs,
    const std::vector<Variable>& output_grads,
    const std::vector<Variable>& wrt,
    const GradOptions& options = {},
    const std::source_location& location = std::source_location::current());

}  // namespace tscope

#pragma GCC visibility pop
