// SPDX-License-Identifier: Apache-2.0
#include "tscope/rewrite/constant_folding.h"

#include <algorithm>
#include <source_location>
#include <vector>

#include "tscope/core/allocator.h"
#include "tscope/graph/op_def.h"

namespace tscope::rewrite {
namespace {
bool all_inputs_constant(const ApplyNode& node) {
  return std::ranges::all_of(node.inputs(), [](const Variable& input) {
    return input.kind() == VariableKind::Constant;
  });
}

// The kernel the VM would link for this node (Program makes the same choice), so a folded value is
// bit-for-bit what the node would have computed on every call.
const KernelImpl& linked_kernel(const ApplyNode& node) {
  const OpDef& op = node.op();
  const bool fast = op.fast.available() &&
                    (op.fast.accepts == nullptr || op.fast.accepts(node.inputs(), node.attrs()));
  return fast ? op.fast : op.reference;
}

std::vector<Tensor> run_once(const ApplyNode& node) {
  std::vector<const Tensor*> inputs;
  for (const Variable& input : node.inputs()) inputs.push_back(&input.constant_value());
  std::vector<Tensor> outputs(static_cast<std::size_t>(node.num_outputs()));
  std::vector<Tensor*> output_slots;
  for (Tensor& output : outputs) output_slots.push_back(&output);
  KernelContext context;
  context.node = &node;
  context.attrs = &node.attrs();
  context.inputs = inputs.data();
  context.outputs = output_slots.data();
  context.num_inputs = node.num_inputs();
  context.num_outputs = node.num_outputs();
  context.allocator = &default_allocator();
  linked_kernel(node).fn(context);
  return outputs;
}
}  // namespace

std::int64_t fold_constant_layouts(FunctionGraph& graph) {
  std::int64_t folded = 0;
  for (ApplyNode* node : graph.toposort()) {
    if (!node->op().traits.fold_when_constant || !all_inputs_constant(*node)) continue;
    const std::vector<Tensor> values = run_once(*node);
    for (int i = 0; i < node->num_outputs(); ++i) {
      const Variable output = node->output(i);
      // The folded value keeps the name of what it was computed from, so memory and printed graphs
      // still say whose data it is ("conv1.weight (packed)").
      const std::string name = node->input(0).name().empty()
                                   ? std::string()
                                   : node->input(0).name() + " (" + std::string(node->op().name) + ")";
      graph.replace(output, make_constant(values[static_cast<std::size_t>(i)], name,
                                          std::source_location::current()));
    }
    ++folded;
  }
  return folded;
}

}  // namespace tscope::rewrite
