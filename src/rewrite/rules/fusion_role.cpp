// SPDX-License-Identifier: Apache-2.0
#include "tscope/rewrite/fusion_role.h"

#include <algorithm>

namespace tscope::rewrite {
namespace {

bool is_float(DType dtype) { return dtype == DType::Float32 || dtype == DType::Float64; }

// Fusion takes only the plain op: a cast carries its dtype as an attribute. The "inplace" mark is
// set by use_inplace, which runs after fusion, so fusion never saw it on the node.
bool is_plain(const Attrs& attrs) {
  return std::ranges::all_of(attrs.values(),
                             [](const auto& entry) { return entry.first == "inplace"; });
}

bool is_fusable_elementwise(const ApplyNode& node) {
  const OpDef& op = node.op();
  if (!op.traits.elementwise || !op.block.available() || node.num_outputs() != 1 ||
      !is_plain(node.attrs())) {
    return false;
  }
  const DType dtype = node.output_node(0).type.dtype;
  return is_float(dtype) && std::ranges::all_of(node.inputs(), [&](const Variable& input) {
           return input.dtype() == dtype;
         });
}

bool is_fusable_reduction(const ApplyNode& node) {
  if (node.op().name != "Sum" && node.op().name != "Max") return false;
  return node.num_inputs() == 1 && is_float(node.input(0).dtype()) &&
         node.output_node(0).type.dtype == node.input(0).dtype();
}

}  // namespace

std::string_view fusion_role(const ApplyNode& node) {
  if (node.op().name == "Composite") {
    return node.attrs().has("reduce") ? "reduction" : "elementwise";
  }
  if (is_fusable_elementwise(node)) return "elementwise";
  if (is_fusable_reduction(node)) return "reduction";
  return "none";
}

}  // namespace tscope::rewrite
