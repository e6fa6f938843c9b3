// SPDX-License-Identifier: Apache-2.0
#include <unordered_map>
#include <unordered_set>

#include "tscope/ops/registry.h"
#include "tscope/rewrite/clamp_rules.h"

namespace tscope::rewrite {
namespace {
bool is_scalar_constant(const Variable& value) {
  return value.kind() == VariableKind::Constant && value.constant_value().numel() == 1;
}
}  // namespace

std::int64_t fuse_clamps(FunctionGraph& graph) {
  const std::vector<ApplyNode*> order = graph.toposort();
  std::unordered_map<const VariableNode*, int> client_count;
  for (const ApplyNode* node : order) {
    for (const Variable& input : node->inputs()) ++client_count[input.node()];
  }
  std::unordered_set<const VariableNode*> outputs;
  for (const Variable& output : graph.outputs()) outputs.insert(output.node());

  std::int64_t fused = 0;
  for (ApplyNode* node : order) {
    if (node->op().name != "Minimum" || node->num_inputs() != 2) continue;
    const Variable& raised = node->input(0);
    const Variable& high = node->input(1);
    const ApplyNode* lift = raised.owner();
    if (lift == nullptr || lift->op().name != "Maximum" || lift->num_inputs() != 2 ||
        !is_scalar_constant(high) || !is_scalar_constant(lift->input(1)) ||
        client_count[raised.node()] != 1 || outputs.contains(raised.node())) {
      continue;
    }
    const auto clip = ApplyNode::create(op_def("Clip"), {lift->input(0), lift->input(1), high},
                                        {}, node->provenance());
    // Clip promotes its operands' dtypes as the two nodes did; anything else is left alone.
    if (!(clip->output(0).type() == node->output(0).type())) continue;
    graph.replace(node->output(0), clip->output(0));
    ++fused;
  }
  return fused;
}

}  // namespace tscope::rewrite
