// SPDX-License-Identifier: Apache-2.0
// Dot -> Dot22, and a sum or difference of a Dot22 and a term, each possibly scaled by a
// constant (a bias add; SGD's momentum * v - rate * g on a weight gradient) -> Gemm, also
// through a reshape that splits the product's rows (a Linear layer on 3-D activations: exporters
// write MatMul + Add, which import as a Dot22 of the flattened rows, a reshape back, and the bias
// add). Gemm computes the same sum up to float rounding, scaling and adding inside the
// product's pass; the term must not broadcast the product itself (which Gemm's output shape
// could not express). A transposed product, (x . y)^T, becomes y^T . x^T: the
// gemm reads transposed operands in place, while the transposed result would be a strided view
// that every elementwise reader walks column by column (the weight gradient of a layer that
// multiplies by W^T, as ONNX Gemm's transB writes it, feeds SGD's update this way).
// fuse_gemm_gelu folds the erf GELU that follows a Gemm (a transformer's MLP) into the Gemm's
// activation, which oneDNN applies as a post-op while the product's rows are in cache, instead
// of a pass that reads and writes the whole product again.
#include <cmath>
#include <numbers>
#include <optional>

#include "tscope/graph/provenance.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"
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

bool is_matrix_transpose(const ApplyNode& node) {
  const std::vector<std::int64_t>& pattern = node.attrs().get_ints("pattern");
  return pattern.size() == 2 && pattern[0] == 1 && pattern[1] == 0;
}

Replacements transpose_through_dot22(const FunctionGraph& graph, ApplyNode& node) {
  static const OpDef& dot22 = op_def("Dot22");
  if (!is_matrix_transpose(node)) return {};
  const Variable& product = node.input(0);
  const ApplyNode* producer = producer_of(product, dot22);
  if (producer == nullptr || !read_once(graph, product)) return {};
  const ProvenanceScope scope(node.provenance(), /*forced=*/true);
  return {ApplyNode::create(dot22, {transpose(producer->input(1)), transpose(producer->input(0))},
                            {}, producer->provenance())
              ->output(0)};
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

// A Gemm's provenance, from the product it takes over and the sum that adds its term: the
// product's creation site (it is most of the work), and both user ops when they differ (an
// exported MatMul and Add; a weight gradient and the optimiser's update), so the profile row
// names both.
Provenance gemm_provenance(const ApplyNode& product, const ApplyNode& sum) {
  Provenance provenance = product.provenance();
  if (!provenance.site.known()) provenance.site = sum.provenance().site;
  const std::string& sum_op = sum.provenance().user_op;
  if (provenance.user_op.empty()) {
    provenance.user_op = sum_op;
  } else if (!sum_op.empty() && sum_op != provenance.user_op) {
    provenance.user_op += " + " + sum_op;
  }
  return provenance;
}

// One side of a sum as scale * value: a product with a scalar constant, read once, is seen
// through (SGD's momentum * v - rate * g); any other side is itself with scale 1.
struct ScaledTerm {
  Variable value;
  double scale = 1.0;
};

ScaledTerm scaled_term(const FunctionGraph& graph, const Variable& side) {
  static const OpDef& mul = op_def("Mul");
  const ApplyNode* product = producer_of(side, mul);
  if (product == nullptr || product->num_inputs() != 2 || !read_once(graph, side)) return {side};
  for (int factor = 0; factor < 2; ++factor) {
    const Variable& scale = product->input(factor);
    const Variable& value = product->input(1 - factor);
    // The same type as the product: the constant broadcasts to the value, not beyond it.
    if (is_scalar_constant(scale) && value.type() == side.type()) {
      return {value, scale.constant_value().at(0)};
    }
  }
  return {side};
}

// beta * z + alpha * x.y as Gemm, from a sum or difference of a Dot22 output read once and a
// term, either possibly scaled by a constant: Gemm applies both factors and the sign inside the
// product's pass, where the elementwise form reads and writes the whole product again.
Replacements gemm_from_scaled_sum(const FunctionGraph& graph, ApplyNode& node) {
  static const OpDef& dot22 = op_def("Dot22");
  static const OpDef& gemm = op_def("Gemm");
  static const OpDef& sub = op_def("Sub");
  if (node.num_inputs() != 2) return {};
  const bool difference = &node.op() == &sub;
  for (int side = 0; side < 2; ++side) {
    const ScaledTerm product = scaled_term(graph, node.input(side));
    const ScaledTerm term = scaled_term(graph, node.input(1 - side));
    const ApplyNode* producer = producer_of(product.value, dot22);
    if (producer == nullptr || !read_once(graph, product.value) || product.value == term.value) {
      continue;
    }
    if (!term_fits_product(term.value, product.value)) continue;
    double alpha = product.scale;
    double beta = term.scale;
    // A zero factor drops its side from Gemm's sum, where 0 * inf in the elementwise form is NaN.
    if (alpha == 0.0 || beta == 0.0) continue;
    if (difference) (side == 0 ? beta : alpha) *= -1.0;
    const Variable result =
        ApplyNode::create(gemm, {term.value, producer->input(0), producer->input(1)},
                          Attrs{{"alpha", alpha}, {"beta", beta}},
                          gemm_provenance(*producer, node))
            ->output(0);
    if (!(result.type() == node.output(0).type())) continue;
    return {result};
  }
  return {};
}

// `term` as a row of n for Gemm's z, when it is one broadcast over the leading axes: its last
// axis statically n, every other axis statically 1. An undefined Variable otherwise.
Variable as_bias_row(const Variable& term, std::int64_t n) {
  const Dims& dims = term.type().dims;
  if (term.rank() == 0 || dims[term.rank() - 1] != n) return {};
  std::vector<std::int64_t> keep_last{term.rank() - 1};
  for (int axis = 0; axis + 1 < term.rank(); ++axis) {
    if (dims[axis] != 1) return {};
  }
  return term.rank() == 1 ? term : dimshuffle(term, keep_last);
}

Replacements gemm_through_row_split(const FunctionGraph& graph, ApplyNode& node) {
  static const OpDef& dot22 = op_def("Dot22");
  static const OpDef& gemm = op_def("Gemm");
  static const OpDef& reshape_op = op_def("Reshape");
  if (node.num_inputs() != 2) return {};
  for (int side = 0; side < 2; ++side) {
    const Variable& reshaped = node.input(side);
    const Variable& term = node.input(1 - side);
    const ApplyNode* reshape_node = producer_of(reshaped, reshape_op);
    if (reshape_node == nullptr || !read_once(graph, reshaped) || reshaped.rank() < 2) continue;
    const Variable& product = reshape_node->input(0);
    const ApplyNode* producer = producer_of(product, dot22);
    if (producer == nullptr || !read_once(graph, product) || term.dtype() != product.dtype()) {
      continue;
    }
    // The last axis stays the product's n, so each run of n is one row of the product.
    const std::int64_t n = product.type().dims[1];
    if (n == kUnknownDim || reshaped.type().dims[reshaped.rank() - 1] != n) continue;
    const ProvenanceScope scope(node.provenance(), /*forced=*/true);
    const Variable row = as_bias_row(term, n);
    if (!row.defined()) continue;
    const Variable sum = ApplyNode::create(gemm, {row, producer->input(0), producer->input(1)},
                                           Attrs{{"alpha", 1.0}, {"beta", 1.0}},
                                           gemm_provenance(*producer, node))
                             ->output(0);
    std::vector<Variable> reshape_inputs = reshape_node->inputs();
    reshape_inputs[0] = sum;
    const Variable result = ApplyNode::create(reshape_op, std::move(reshape_inputs),
                                              reshape_node->attrs(), node.provenance())
                                ->output(0);
    if (!(result.type() == node.output(0).type())) continue;
    return {result};
  }
  return {};
}

// Whether `value` is a constant of one element within float32 rounding of `expected`.
bool is_constant_near(const Variable& value, double expected) {
  return is_scalar_constant(value) &&
         std::abs(value.constant_value().at(0) - expected) <= 1e-6 * std::abs(expected);
}

// The x of erf(x / sqrt(2)) or erf(x * (1 / sqrt(2))), when `scaled` (the erf's input) is one of
// those, read once.
std::optional<Variable> erf_argument_source(const FunctionGraph& graph, const Variable& scaled) {
  static const OpDef& true_div = op_def("TrueDiv");
  static const OpDef& mul = op_def("Mul");
  if (!read_once(graph, scaled)) return std::nullopt;
  if (const ApplyNode* div = producer_of(scaled, true_div)) {
    if (is_constant_near(div->input(1), std::numbers::sqrt2)) return div->input(0);
    return std::nullopt;
  }
  if (const ApplyNode* product = producer_of(scaled, mul)) {
    for (int side = 0; side < 2; ++side) {
      if (is_constant_near(product->input(1 - side), 1.0 / std::numbers::sqrt2)) {
        return product->input(side);
      }
    }
  }
  return std::nullopt;
}

// The x of 1 + erf(x / sqrt(2)) (either operand order), when `term` is one, read once.
std::optional<Variable> gelu_cdf_source(const FunctionGraph& graph, const Variable& term) {
  static const OpDef& add = op_def("Add");
  static const OpDef& erf_op = op_def("Erf");
  const ApplyNode* sum = producer_of(term, add);
  if (sum == nullptr || sum->num_inputs() != 2 || !read_once(graph, term)) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const ApplyNode* erf_node = producer_of(sum->input(side), erf_op);
    if (erf_node == nullptr || !read_once(graph, sum->input(side)) ||
        !is_constant_near(sum->input(1 - side), 1.0)) {
      continue;
    }
    return erf_argument_source(graph, erf_node->input(0));
  }
  return std::nullopt;
}

// The x of the GELU x * 0.5 * (1 + erf(x / sqrt(2))) whose three factors are `factors`, in any
// order; x must be read by the GELU alone (its scaling for the erf and one product).
std::optional<Variable> gelu_source(const FunctionGraph& graph, const Variable (&factors)[3]) {
  for (int half = 0; half < 3; ++half) {
    if (!is_constant_near(factors[half], 0.5)) continue;
    for (int cdf = 0; cdf < 3; ++cdf) {
      if (cdf == half) continue;
      const Variable& x = factors[3 - half - cdf];
      const std::optional<Variable> source = gelu_cdf_source(graph, factors[cdf]);
      if (source && *source == x && graph.clients(x).size() == 2) return x;
    }
  }
  return std::nullopt;
}

// A GELU applied to a Gemm without an activation, or to a reshape of one (a Linear layer on
// 3-D or 4-D activations), becomes that Gemm with the activation (under the reshape). The
// GELU's root is a product of two values, one of them a product read only by it.
Replacements fuse_gemm_gelu(const FunctionGraph& graph, ApplyNode& node) {
  static const OpDef& mul = op_def("Mul");
  static const OpDef& gemm = op_def("Gemm");
  static const OpDef& reshape_op = op_def("Reshape");
  if (node.num_inputs() != 2) return {};
  for (int side = 0; side < 2; ++side) {
    const ApplyNode* inner = producer_of(node.input(side), mul);
    if (inner == nullptr || inner->num_inputs() != 2 || !read_once(graph, node.input(side))) {
      continue;
    }
    const Variable factors[3] = {inner->input(0), inner->input(1), node.input(1 - side)};
    const std::optional<Variable> x = gelu_source(graph, factors);
    if (!x || !(x->type() == node.output(0).type())) continue;
    const ApplyNode* reshape_node = producer_of(*x, reshape_op);
    const Variable& product = reshape_node != nullptr ? reshape_node->input(0) : *x;
    const ApplyNode* producer = producer_of(product, gemm);
    if (producer == nullptr || producer->attrs().has("activation") ||
        (reshape_node != nullptr && !read_once(graph, product))) {
      continue;
    }
    Attrs attrs = producer->attrs();
    attrs.set("activation", std::string("gelu_erf"));
    const Variable activated =
        ApplyNode::create(gemm, producer->inputs(), std::move(attrs), producer->provenance())
            ->output(0);
    if (reshape_node == nullptr) return {activated};
    std::vector<Variable> reshape_inputs = reshape_node->inputs();
    reshape_inputs[0] = activated;
    return {ApplyNode::create(reshape_op, std::move(reshape_inputs), reshape_node->attrs(),
                              reshape_node->provenance())
                ->output(0)};
  }
  return {};
}
}  // namespace

std::vector<LocalRule> blas_rules() {
  return {{"dot_to_dot22", {&op_def("Dot")}, dot_to_dot22},
          {"gemm_from_scaled_sum", {&op_def("Add"), &op_def("Sub")}, gemm_from_scaled_sum},
          {"gemm_through_row_split", {&op_def("Add")}, gemm_through_row_split},
          {"transpose_through_dot22", {&op_def("DimShuffle")}, transpose_through_dot22},
          {"fuse_gemm_gelu", {&op_def("Mul")}, fuse_gemm_gelu}};
}

}  // namespace tscope::rewrite
