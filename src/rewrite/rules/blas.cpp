// SPDX-License-Identifier: Apache-2.0
// Dot -> Dot22 and Dot22 + add -> Gemm. Both are exact: Gemm with alpha = beta = 1 computes the
// same sum, and the add must not broadcast the product itself (which Gemm's output shape could
// not express).
#include "tscope/ops/registry.h"
#include "tscope/rewrite/blas_rules.h"
#include "tscope/rewrite/pattern.h"

namespace tscope::rewrite {
namespace {
bool is_float(DType dtype) { return dtype == DType::Float32 || dtype == DType::Float64; }

Replacements dot_to_dot22(const FunctionGraph&, ApplyNode& node) {
  static const OpDef& dot22 = op_def("Dot22");
  const Variable& x = node.input(0);
  const Variable& y = node.input(1);
  if (x.rank() != 2 || y.rank() != 2 || x.dtype() != y.dtype() || !is_float(x.dtype())) return {};
  return {ApplyNode::create(dot22, node.inputs(), {}, node.provenance())->output(0)};
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

Replacements gemm_from_dot22_add(const FunctionGraph& graph, ApplyNode& node) {
  static const OpDef& dot22 = op_def("Dot22");
  static const OpDef& gemm = op_def("Gemm");
  if (node.num_inputs() != 2) return {};
  for (int side = 0; side < 2; ++side) {
    const Variable& product = node.input(side);
    const Variable& term = node.input(1 - side);
    const ApplyNode* producer = producer_of(product, dot22);
    if (producer == nullptr || !read_once(graph, product) || product == term) continue;
    if (!term_fits_product(term, product)) continue;
    return {ApplyNode::create(gemm, {term, producer->input(0), producer->input(1)},
                              Attrs{{"alpha", 1.0}, {"beta", 1.0}}, node.provenance())
                ->output(0)};
  }
  return {};
}
}  // namespace

std::vector<LocalRule> blas_rules() {
  return {{"dot_to_dot22", {&op_def("Dot")}, dot_to_dot22},
          {"gemm_from_dot22_add", {&op_def("Add")}, gemm_from_dot22_add}};
}

}  // namespace tscope::rewrite
