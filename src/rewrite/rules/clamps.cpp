// SPDX-License-Identifier: Apache-2.0
#include "tscope/ops/registry.h"
#include "tscope/rewrite/clamp_rules.h"
#include "tscope/rewrite/pattern.h"

namespace tscope::rewrite {
namespace {
Replacements fuse_clamp(const FunctionGraph& graph, ApplyNode& node) {
  static const OpDef& maximum = op_def("Maximum");
  static const OpDef& clip_op = op_def("Clip");
  if (node.num_inputs() != 2) return {};
  const Variable& raised = node.input(0);
  const Variable& high = node.input(1);
  const ApplyNode* lift = producer_of(raised, maximum);
  if (lift == nullptr || lift->num_inputs() != 2 || !is_scalar_constant(high) ||
      !is_scalar_constant(lift->input(1)) || !read_once(graph, raised)) {
    return {};
  }
  const auto clip =
      ApplyNode::create(clip_op, {lift->input(0), lift->input(1), high}, {}, node.provenance());
  // Clip promotes its operands' dtypes as the two nodes did; anything else is left alone.
  if (!(clip->output(0).type() == node.output(0).type())) return {};
  return {clip->output(0)};
}
}  // namespace

LocalRule clamp_rule() { return {"fuse_clamps", {&op_def("Minimum")}, fuse_clamp}; }

}  // namespace tscope::rewrite
