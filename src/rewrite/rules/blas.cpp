// SPDX-License-Identifier: Apache-2.0
// Dot -> Dot22 and Dot22 + add -> Gemm. Both are exact: Gemm with alpha = beta = 1 computes the
// same sum, and the add must not broadcast the product itself (which Gemm's output shape could
// not express).
#include <unordered_map>

#include "tscope/ops/registry.h"
#include "tscope/rewrite/blas_rules.h"

namespace tscope::rewrite {
namespace {
bool is_float(DType dtype) { return dtype == DType::Float32 || dtype == DType::Float64; }

bool is_dot22_candidate(const ApplyNode& node) {
  if (node.op().name != "Dot") return false;
  const Variable& x = node.input(0);
  const Variable& y = node.input(1);
  return x.rank() == 2 && y.rank() == 2 && x.dtype() == y.dtype() && is_float(x.dtype());
}

std::int64_t dot_to_dot22(FunctionGraph& graph) {
  const OpDef& dot22 = op_def("Dot22");
  std::int64_t changes = 0;
  for (ApplyNode* node : graph.toposort()) {
    if (!is_dot22_candidate(*node)) continue;
    const auto replacement = ApplyNode::create(dot22, node->inputs(), {}, node->provenance());
    graph.replace(node->output(0), replacement->output(0));
    ++changes;
  }
  return changes;
}

// Uses of each variable: node inputs plus graph outputs.
std::unordered_map<const VariableNode*, int> count_clients(const FunctionGraph& graph) {
  std::unordered_map<const VariableNode*, int> clients;
  for (ApplyNode* node : graph.toposort()) {
    for (const Variable& input : node->inputs()) ++clients[input.node()];
  }
  for (const Variable& output : graph.outputs()) ++clients[output.node()];
  return clients;
}

// True when adding `term` to `product` (a 2-D Dot22 output) gives a result of the product's
// shape: every axis of the product that is statically 1 meets a term axis that is also 1.
bool term_fits_product(const Variable& term, const Variable& product) {
  if (term.dtype() != product.dtype() || term.rank() > 2) return false;
  for (int axis = 0; axis < 2; ++axis) {
    const int term_axis = axis - (2 - term.rank());
    if (term_axis < 0) continue;
    if (product.type().dims[axis] == 1 && term.type().dims[term_axis] != 1) return false;
  }
  return true;
}

std::int64_t add_to_gemm(FunctionGraph& graph) {
  const OpDef& gemm = op_def("Gemm");
  std::int64_t changes = 0;
  std::unordered_map<const VariableNode*, int> clients = count_clients(graph);
  for (ApplyNode* node : graph.toposort()) {
    if (node->op().name != "Add" || node->num_inputs() != 2) continue;
    for (int side = 0; side < 2; ++side) {
      const Variable& product = node->input(side);
      const Variable& term = node->input(1 - side);
      const ApplyNode* producer = product.owner();
      if (producer == nullptr || producer->op().name != "Dot22") continue;
      if (clients[product.node()] != 1 || product == term) continue;
      if (!term_fits_product(term, product)) continue;
      const auto replacement =
          ApplyNode::create(gemm, {term, producer->input(0), producer->input(1)},
                            Attrs{{"alpha", 1.0}, {"beta", 1.0}}, node->provenance());
      graph.replace(node->output(0), replacement->output(0));
      ++changes;
      break;
    }
  }
  return changes;
}
}  // namespace

std::int64_t use_blas_products(FunctionGraph& graph) {
  const std::int64_t dot22_changes = dot_to_dot22(graph);
  return dot22_changes + add_to_gemm(graph);
}

}  // namespace tscope::rewrite
