// SPDX-License-Identifier: Apache-2.0
#include "tscope/grad/grad.h"

#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "tscope/core/clock.h"
#include "tscope/core/process_counters.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/traversal.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"

namespace tscope {
namespace {
class GradTimer {
 public:
  GradTimer() : start_ns_(steady_clock().now_ns()) {}
  ~GradTimer() { add_grad_time_ns(steady_clock().now_ns() - start_ns_); }
  GradTimer(const GradTimer&) = delete;
  GradTimer& operator=(const GradTimer&) = delete;

 private:
  std::int64_t start_ns_;
};

void accumulate(std::unordered_map<const VariableNode*, Variable>& grads, const Variable& target,
                Variable contribution) {
  auto it = grads.find(target.node());
  if (it == grads.end()) {
    grads.emplace(target.node(), std::move(contribution));
  } else {
    it->second = it->second + contribution;
  }
}

// Reverse accumulation from seeded gradients: `seeds` pairs a value with its gradient.
std::vector<Variable> backpropagate(const std::vector<std::pair<Variable, Variable>>& seeds,
                                    const std::vector<Variable>& wrt,
                                    const GradOptions& options,
                                    const std::source_location& location) {
  std::vector<Variable> roots;
  for (const auto& [value, seed] : seeds) roots.push_back(value);
  const std::vector<ApplyNode*> order = ancestors_in_topological_order(roots);

  // Variables that depend on some wrt, through no variable considered constant: only their
  // producers need pullbacks.
  std::unordered_set<const VariableNode*> constants;
  for (const Variable& value : options.consider_constant) constants.insert(value.node());
  std::unordered_set<const VariableNode*> depends;
  for (const Variable& target : wrt) {
    if (constants.count(target.node()) == 0) depends.insert(target.node());
  }
  for (ApplyNode* node : order) {
    bool any = false;
    for (const Variable& input : node->inputs()) any = any || depends.count(input.node()) != 0;
    if (!any) continue;
    for (int i = 0; i < node->num_outputs(); ++i) {
      if (constants.count(&node->output_node(i)) == 0) depends.insert(&node->output_node(i));
    }
  }

  std::unordered_map<const VariableNode*, Variable> grads;
  for (const auto& [value, seed] : seeds) accumulate(grads, value, seed);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    ApplyNode* node = *it;
    bool on_path = false;
    for (int i = 0; i < node->num_outputs(); ++i) {
      on_path = on_path || depends.count(&node->output_node(i)) != 0;
    }
    if (!on_path) continue;
    std::vector<Variable> output_grads;
    bool any_grad = false;
    for (int i = 0; i < node->num_outputs(); ++i) {
      auto found = grads.find(&node->output_node(i));
      output_grads.push_back(found == grads.end() ? Variable() : found->second);
      any_grad = any_grad || found != grads.end();
    }
    if (!any_grad || node->op().traits.zero_gradient) continue;
    if (node->op().pullback == nullptr) {
      throw Error(ErrorKind::NotDifferentiable,
                  fmt::format("op {} has no gradient", node->op().name))
          .add_context("in " + node->describe());
    }
    const std::vector<Variable> outputs = node->outputs();
    ProvenanceScope scope(
        Provenance{node->provenance().site, "grad(" + node->provenance().user_op + ")"},
        /*forced=*/true);
    std::vector<Variable> input_grads;
    try {
      input_grads = node->op().pullback(
          PullbackContext{*node, node->inputs(), outputs, output_grads, node->attrs()});
    } catch (Error& error) {
      error.add_context("while differentiating " + node->describe());
      throw;
    }
    TSCOPE_CHECK(static_cast<int>(input_grads.size()) == node->num_inputs(),
                 fmt::format("pullback of {} returned {} gradients for {} inputs", node->op().name,
                             input_grads.size(), node->num_inputs()));
    for (int i = 0; i < node->num_inputs(); ++i) {
      const Variable& input = node->input(i);
      if (!input_grads[i].defined() || depends.count(input.node()) == 0) continue;
      TSCOPE_CHECK(input_grads[i].rank() == input.rank(),
                   fmt::format("pullback of {} gave rank {} for input {} of rank {}",
                               node->op().name, input_grads[i].rank(), i, input.rank()));
      Variable contribution = input_grads[i];
      if (contribution.dtype() != input.dtype() && is_floating(input.dtype())) {
        contribution = cast(contribution, input.dtype());
      }
      accumulate(grads, input, contribution);
    }
  }

  std::vector<Variable> result;
  for (const Variable& target : wrt) {
    auto found = grads.find(target.node());
    if (found != grads.end()) {
      result.push_back(found->second);
      continue;
    }
    if (options.disconnected == DisconnectedPolicy::Raise) {
      throw_error(ErrorKind::InvalidArgument,
                  "grad(): the cost does not depend on '{}' (created at {}); pass "
                  "GradOptions{{.disconnected = DisconnectedPolicy::Zero}} to get zeros",
                  target.to_string(), target.node()->provenance.site.short_string());
    }
    ProvenanceScope scope("grad", location, /*forced=*/true);
    result.push_back(second(target, make_constant(Tensor::scalar(0.0, target.dtype()), "", location)));
  }
  return result;
}
}  // namespace

std::vector<Variable> grad(const Variable& cost,
                           const std::vector<Variable>& wrt,
                           const GradOptions& options,
                           const std::source_location& location) {
  GradTimer timer;
  if (!cost.defined() || cost.rank() != 0 || !is_floating(cost.dtype())) {
    throw_error(ErrorKind::TypeMismatch,
                "grad() needs a floating-point scalar cost; got {} (at {})",
                cost.defined() ? cost.type().to_string() : "<undefined>",
                SourceSite::from(location).short_string());
  }
  Variable one;
  {
    ProvenanceScope seed_scope("grad", location, /*forced=*/true);
    one = make_constant(Tensor::scalar(1.0, cost.dtype()), "", location);
  }
  return backpropagate({{cost, one}}, wrt, options, location);
}

std::vector<Variable> grad_of_outputs(const std::vector<Variable>& outputs,
                                      const std::vector<Variable>& output_grads,
                                      const std::vector<Variable>& wrt,
                                      const GradOptions& options,
                                      const std::source_location& location) {
  GradTimer timer;
  TSCOPE_CHECK(outputs.size() == output_grads.size(), "grad_of_outputs: one gradient per output");
  std::vector<std::pair<Variable, Variable>> seeds;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (!output_grads[i].defined()) continue;
    if (output_grads[i].dtype() != outputs[i].dtype() ||
        output_grads[i].rank() != outputs[i].rank()) {
      throw_error(ErrorKind::TypeMismatch,
                  "grad_of_outputs: the gradient of output {} is {}, the output is {} (at {})", i,
                  output_grads[i].type().to_string(), outputs[i].type().to_string(),
                  SourceSite::from(location).short_string());
    }
    seeds.emplace_back(outputs[i], output_grads[i]);
  }
  TSCOPE_CHECK(!seeds.empty(), "grad_of_outputs: every output gradient is undefined");
  return backpropagate(seeds, wrt, options, location);
}

}  // namespace tscope
