// SPDX-License-Identifier: Apache-2.0
// use_inplace: see inplace_rules.h for the conditions and why each is needed.
#include <algorithm>
#include <string_view>

#include "tscope/rewrite/inplace_rules.h"

namespace tscope::rewrite {
namespace {

constexpr const char* kInplaceAttribute = "inplace";

// Ops whose kernels read every input element at the index of the output element they write, and
// write output 0 only through allocate_output.
bool writes_elementwise(const ApplyNode& node) {
  if (node.num_outputs() != 1 || overwritten_input(node) >= 0) return false;
  const OpDef& op = node.op();
  if (op.name == "Composite") return !node.attrs().has("reduce");
  return op.traits.elementwise && op.block.available();
}

// Whether `input` has `output`'s dtype and, as far as the types tell, its shape.
bool same_static_shape(const Type& input, const Type& output) {
  if (input.dtype != output.dtype || input.rank() != output.rank()) return false;
  for (int axis = 0; axis < input.rank(); ++axis) {
    const std::int64_t in = input.dims[axis];
    const std::int64_t out = output.dims[axis];
    if (in == 1 && out != 1) return false;  // broadcast along this axis
    if (in != kUnknownDim && out != kUnknownDim && in != out) return false;
  }
  return true;
}

bool is_declared_view(const Variable& value) {
  const ApplyNode& producer = *value.owner();
  int index = 0;
  while (index < producer.num_outputs() && producer.output(index).node() != value.node()) ++index;
  return std::ranges::any_of(producer.op().aliasing.views,
                             [&](const auto& view) { return view.first == index; });
}

bool may_overwrite(const FunctionGraph& graph, const ApplyNode& node, int k) {
  const Variable& input = node.input(k);
  if (input.owner() == nullptr || graph.is_output(input)) return false;
  if (!same_static_shape(input.type(), node.output(0).type())) return false;
  const auto& readers = graph.clients(input);
  if (!std::ranges::all_of(readers, [&](const Client& client) { return client.node == &node; })) {
    return false;
  }
  return !is_declared_view(input);
}

}  // namespace

int overwritten_input(const ApplyNode& node) {
  return static_cast<int>(node.attrs().get_int_or(kInplaceAttribute, -1));
}

std::int64_t use_inplace(FunctionGraph& graph) {
  std::int64_t marked = 0;
  for (ApplyNode* node : graph.toposort()) {
    if (!graph.contains(*node) || !writes_elementwise(*node)) continue;
    for (int k = 0; k < node->num_inputs(); ++k) {
      if (!may_overwrite(graph, *node, k)) continue;
      Attrs attrs = node->attrs();
      attrs.set(kInplaceAttribute, std::int64_t{k});
      const auto marked_node =
          ApplyNode::create(node->op(), node->inputs(), std::move(attrs), node->provenance());
      graph.replace(node->output(0), marked_node->output(0));
      ++marked;
      break;
    }
  }
  return marked;
}

}  // namespace tscope::rewrite
