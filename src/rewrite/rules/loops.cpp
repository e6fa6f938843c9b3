// SPDX-License-Identifier: Apache-2.0
#include <algorithm>

#include "tscope/graph/apply.h"
#include "tscope/graph/traversal.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/loop.h"
#include "tscope/ops/registry.h"
#include "tscope/rewrite/loop_rules.h"

namespace tscope::rewrite {
namespace {

// A Scan node like `node` (same provenance) running `body` on `inputs`.
std::shared_ptr<ApplyNode> loop_node(const ApplyNode& node,
                                     std::shared_ptr<const LoopBody> body,
                                     std::vector<Variable> inputs) {
  Attrs attrs = node.attrs();
  attrs.set("body", std::shared_ptr<const Subgraph>(std::move(body)));
  return ApplyNode::create(node.op(), std::move(inputs), std::move(attrs), node.provenance());
}

Replacements hoist_invariants(const FunctionGraph&, ApplyNode& node) {
  std::optional<LoopBody::Hoisted> hoisted =
      loop_body(node.attrs()).hoist_invariants(node.inputs());
  if (!hoisted.has_value()) return {};
  return loop_node(node, std::move(hoisted->body), std::move(hoisted->outer_inputs))->outputs();
}

Replacements push_out_sequence_work(const FunctionGraph&, ApplyNode& node) {
  std::optional<LoopBody::Hoisted> pushed =
      loop_body(node.attrs()).push_out_sequence_work(node.inputs());
  if (!pushed.has_value()) return {};
  return loop_node(node, std::move(pushed->body), std::move(pushed->outer_inputs))->outputs();
}

Replacements push_out_accumulated_products(const FunctionGraph&, ApplyNode& node) {
  std::optional<LoopBody::Reshaped> reshaped =
      loop_body(node.attrs()).push_out_accumulated_products(node.inputs());
  if (!reshaped.has_value()) return {};
  const std::shared_ptr<ApplyNode> loop =
      loop_node(node, std::move(reshaped->body), std::move(reshaped->outer_inputs));
  return reshaped->old_outputs(loop->outputs());
}

// Whether `node` is x[-1]: a Subtensor taking the last row of axis 0 with a constant index.
bool takes_last_row(const ApplyNode& node) {
  if (node.op().name != "Subtensor" || node.num_inputs() != 1) return false;
  // The attributes subtensor() gives that index, whatever x is.
  const Variable probe = make_input(node.input(0).dtype(), node.input(0).type().dims, "",
                                    std::source_location::current());
  const Variable last = subtensor(probe, {-1});
  return last.owner()->attrs() == node.attrs();
}

// Whether `later` reads, directly or not, an output of `earlier`.
bool depends_on(const ApplyNode& later, const ApplyNode& earlier) {
  for (const ApplyNode* ancestor : ancestors_in_topological_order(later.inputs())) {
    if (ancestor == &earlier) return true;
  }
  return false;
}

// Merges the first pair of loops over the same sequences that it finds; false when none.
bool merge_one_pair(FunctionGraph& graph, const OpDef& scan_op) {
  std::vector<ApplyNode*> loops;
  for (ApplyNode* node : graph.toposort()) {
    if (&node->op() == &scan_op) loops.push_back(node);
  }
  for (std::size_t i = 0; i < loops.size(); ++i) {
    for (std::size_t j = i + 1; j < loops.size(); ++j) {
      ApplyNode& first = *loops[i];
      ApplyNode& second = *loops[j];  // later in topological order: `first` cannot read it
      std::optional<LoopBody::Hoisted> merged =
          loop_body(first.attrs())
              .merged_with(loop_body(second.attrs()), first.inputs(), second.inputs());
      if (!merged.has_value() || depends_on(second, first)) continue;
      const std::shared_ptr<ApplyNode> both =
          loop_node(first, std::move(merged->body), std::move(merged->outer_inputs));
      for (int o = 0; o < first.num_outputs(); ++o) graph.replace(first.output(o), both->output(o));
      for (int o = 0; o < second.num_outputs(); ++o) {
        graph.replace(second.output(o), both->output(first.num_outputs() + o));
      }
      return true;
    }
  }
  return false;
}

}  // namespace

std::int64_t merge_sibling_loops(FunctionGraph& graph) {
  const OpDef& scan_op = op_def("Scan");
  std::int64_t merged = 0;
  while (merge_one_pair(graph, scan_op)) ++merged;
  return merged;
}

LocalRule loop_invariant_rule() {
  return {"hoist_loop_invariants", {&op_def("Scan")}, hoist_invariants};
}

LocalRule loop_sequence_work_rule() {
  return {"push_out_sequence_work", {&op_def("Scan")}, push_out_sequence_work};
}

LocalRule loop_accumulation_rule() {
  return {"push_out_accumulated_products", {&op_def("Scan")}, push_out_accumulated_products};
}

std::int64_t keep_last_steps_only(FunctionGraph& graph) {
  std::int64_t changed = 0;
  const OpDef& scan_op = op_def("Scan");
  for (ApplyNode* node : graph.toposort()) {
    if (&node->op() != &scan_op || !graph.contains(*node)) continue;
    const LoopBody* body = &loop_body(node->attrs());
    std::shared_ptr<const LoopBody> changed_body;
    std::vector<int> last_only;
    for (int o = 0; o < node->num_outputs(); ++o) {
      const Variable output = node->output(o);
      const std::vector<Client>& clients = graph.clients(output);
      if (!body->can_keep_last_only(o) || clients.empty()) continue;
      const bool only_last = std::all_of(clients.begin(), clients.end(), [](const Client& client) {
        return !client.is_output() && takes_last_row(*client.node);
      });
      if (!only_last) continue;
      changed_body = body->with_last_only(o);
      body = changed_body.get();
      last_only.push_back(o);
    }
    if (last_only.empty()) continue;
    const std::shared_ptr<ApplyNode> replacement = loop_node(*node, changed_body, node->inputs());
    for (int o = 0; o < node->num_outputs(); ++o) {
      const Variable output = node->output(o);
      if (std::find(last_only.begin(), last_only.end(), o) == last_only.end()) {
        graph.replace(output, replacement->output(o));
        continue;
      }
      // Every reader takes the last row, which is now the output itself.
      const std::vector<Client> clients = graph.clients(output);
      for (const Client& client : clients) {
        graph.replace(client.node->output(0), replacement->output(o));
      }
    }
    changed += static_cast<std::int64_t>(last_only.size());
  }
  return changed;
}

}  // namespace tscope::rewrite
