// SPDX-License-Identifier: Apache-2.0
#include "trace_labels.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "signature_cost.h"

namespace tscope::runtime {
namespace {

void append_tensors(std::string& out, const std::vector<profile::TensorRecord>& tensors) {
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (i > 0) out += ' ';
    out += fmt::format("{}[{}]", tensors[i].dtype, fmt::join(tensors[i].shape, ","));
    if (!tensors[i].contiguous) out += "(strided)";
  }
}

}  // namespace

std::vector<profile::TraceNodeLabel> trace_node_labels(const Program& program) {
  std::vector<profile::TraceNodeLabel> labels;
  labels.reserve(program.instruction_count());
  for (std::size_t index = 0; index < program.instruction_count(); ++index) {
    const ApplyNode& node = *program.node(index);
    profile::TraceNodeLabel label;
    label.name = node.to_string();
    label.class_name = std::string(node.op().family);
    label.op_name = node.op_string();
    label.impl = std::string(program.impl_name(index));
    label.site = node.provenance().site.short_string();
    label.user_op = node.provenance().user_op;
    labels.push_back(std::move(label));
  }
  return labels;
}

profile::TraceSignatureLabel trace_signature_label(const ApplyNode& node,
                                                   const profile::SignatureRecord& signature) {
  profile::TraceSignatureLabel label;
  append_tensors(label.shapes, signature.inputs);
  label.shapes += " -> ";
  append_tensors(label.shapes, signature.outputs);
  if (const std::optional<Cost> cost = signature_cost(node, signature.inputs, signature.outputs)) {
    label.flops = cost->flops;
    label.bytes = cost->bytes;
  }
  return label;
}

}  // namespace tscope::runtime
