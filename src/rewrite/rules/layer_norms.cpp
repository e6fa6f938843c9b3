// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "tscope/graph/provenance.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/registry.h"
#include "tscope/rewrite/layer_norm_rules.h"
#include "tscope/rewrite/pattern.h"

namespace tscope::rewrite {
namespace {
/// What a matched normalisation (x - mean) / sqrt(var + eps) normalises.
struct Normalisation {
  Variable x;
  std::int64_t axis = 0;
  double epsilon = 0;
};

/// The first axis of a keepdims Mean over the trailing axes of its input; nullopt otherwise.
std::optional<std::int64_t> trailing_mean_axis(const ApplyNode& mean_node) {
  if (!mean_node.attrs().get_bool_or("keepdims", false)) return std::nullopt;
  const std::vector<std::int64_t>& axes = mean_node.attrs().get_ints("axes");
  const int rank = mean_node.input(0).rank();
  if (axes.empty() || axes.back() != rank - 1) return std::nullopt;
  for (std::size_t k = 1; k < axes.size(); ++k) {
    if (axes[k] != axes[k - 1] + 1) return std::nullopt;
  }
  return axes.front();
}

/// Whether every reader of `value` is one of `readers` (never a graph output).
bool read_only_by(const FunctionGraph& graph,
                  const Variable& value,
                  std::initializer_list<const ApplyNode*> readers) {
  for (const Client& client : graph.clients(value)) {
    if (client.is_output() ||
        std::find(readers.begin(), readers.end(), client.node) == readers.end()) {
      return false;
    }
  }
  return true;
}

/// The node squaring `centred`: sqr(c), pow(c, 2) with a scalar constant 2, or c * c.
const ApplyNode* square_of(const Variable& squared, const Variable& centred) {
  static const OpDef& sqr_op = op_def("Sqr");
  static const OpDef& pow_op = op_def("Pow");
  static const OpDef& mul_op = op_def("Mul");
  const ApplyNode* node = squared.owner();
  if (node == nullptr || node->input(0).node() != centred.node()) return nullptr;
  if (&node->op() == &sqr_op) return node;
  if (&node->op() == &pow_op && is_scalar_constant(node->input(1)) &&
      node->input(1).constant_value().at(0) == 2.0) {
    return node;
  }
  if (&node->op() == &mul_op && node->input(1).node() == centred.node()) return node;
  return nullptr;
}

/// Matches root = sqrt(v + eps), v = mean(square(c)), c = x - mean(x), the means over the same
/// trailing axes, every intermediate read once (c by its square and by `normaliser` only).
std::optional<Normalisation> match_statistics(const FunctionGraph& graph,
                                              const Variable& root,
                                              const Variable& centred,
                                              const ApplyNode& normaliser) {
  static const OpDef& sqrt_op = op_def("Sqrt");
  static const OpDef& add_op = op_def("Add");
  static const OpDef& mean_op = op_def("Mean");
  static const OpDef& sub_op = op_def("Sub");
  const ApplyNode* root_node = producer_of(root, sqrt_op);
  if (root_node == nullptr || !read_once(graph, root)) return std::nullopt;
  const Variable& shifted = root_node->input(0);
  const ApplyNode* shift = producer_of(shifted, add_op);
  if (shift == nullptr || !read_once(graph, shifted)) return std::nullopt;
  const int eps_index = is_scalar_constant(shift->input(1)) ? 1 : 0;
  const Variable& eps = shift->input(eps_index);
  const Variable& variance = shift->input(1 - eps_index);
  if (!is_scalar_constant(eps) || !std::isfinite(eps.constant_value().at(0))) return std::nullopt;
  const ApplyNode* variance_mean = producer_of(variance, mean_op);
  if (variance_mean == nullptr || !read_once(graph, variance)) return std::nullopt;
  const Variable& squared = variance_mean->input(0);
  const ApplyNode* square = square_of(squared, centred);
  if (square == nullptr || !read_once(graph, squared)) return std::nullopt;
  const ApplyNode* subtract = producer_of(centred, sub_op);
  if (subtract == nullptr || !read_only_by(graph, centred, {square, &normaliser})) {
    return std::nullopt;
  }
  const Variable& x = subtract->input(0);
  const Variable& average = subtract->input(1);
  const ApplyNode* mean_node = producer_of(average, mean_op);
  if (mean_node == nullptr || mean_node->input(0).node() != x.node() ||
      !read_once(graph, average) || !is_floating(x.dtype()) || !(centred.type() == x.type())) {
    return std::nullopt;
  }
  const std::optional<std::int64_t> axis = trailing_mean_axis(*mean_node);
  if (!axis || axis != trailing_mean_axis(*variance_mean) ||
      !(mean_node->attrs() == variance_mean->attrs())) {
    return std::nullopt;
  }
  return Normalisation{x, *axis, eps.constant_value().at(0)};
}

/// c / sqrt(...) or c * reciprocal(sqrt(...)) (either order): the statistics it divides by.
std::optional<Normalisation> match_normalisation(const FunctionGraph& graph,
                                                 const ApplyNode& node) {
  static const OpDef& div_op = op_def("TrueDiv");
  static const OpDef& reciprocal_op = op_def("Reciprocal");
  if (node.num_inputs() != 2) return std::nullopt;
  if (&node.op() == &div_op) return match_statistics(graph, node.input(1), node.input(0), node);
  for (int k = 0; k < 2; ++k) {
    const Variable& inverse = node.input(1 - k);
    const ApplyNode* reciprocal = producer_of(inverse, reciprocal_op);
    if (reciprocal == nullptr || !read_once(graph, inverse)) continue;
    if (auto found = match_statistics(graph, reciprocal->input(0), node.input(k), node))
      return found;
  }
  return std::nullopt;
}

/// Whether `parameter` can scale or shift the rows of a LayerNorm over x from `axis` on without
/// changing the result's shape: x's dtype, no more axes than the rows have, and each of its dims
/// (aligned to the right) 1 or statically the row's extent there.
bool fits_rows(const Variable& parameter, const Variable& x, std::int64_t axis) {
  if (parameter.dtype() != x.dtype()) return false;
  const int lead = x.rank() - parameter.rank();
  if (lead < axis) return false;
  for (int k = 0; k < parameter.rank(); ++k) {
    const std::int64_t dim = parameter.type().dims[k];
    if (dim != 1 && (dim == kUnknownDim || dim != x.type().dims[lead + k])) return false;
  }
  return true;
}

/// node = op(ln, parameter) in either order, ln a LayerNorm read only here that has no beta (and,
/// for a product, no gamma either): the LayerNorm with the parameter folded in.
Variable fold_parameter(const FunctionGraph& graph, ApplyNode& node, bool is_gamma) {
  static const OpDef& layer_norm_op = op_def("LayerNorm");
  for (int k = 0; k < 2; ++k) {
    const ApplyNode* ln = producer_of(node.input(k), layer_norm_op);
    if (ln == nullptr || !read_once(graph, node.input(k))) continue;
    const Attrs& attrs = ln->attrs();
    const bool has_gamma = attrs.get_bool("scale");
    if (attrs.get_bool("bias") || (is_gamma && has_gamma)) continue;
    const Variable& x = ln->input(0);
    const Variable& parameter = node.input(1 - k);
    if (!fits_rows(parameter, x, attrs.get_int("axis"))) continue;
    const LayerNormOptions options{.axis = attrs.get_int("axis"),
                                   .epsilon = attrs.get_double("epsilon")};
    const Variable gamma = is_gamma ? parameter : (has_gamma ? ln->input(1) : Variable());
    const Variable beta = is_gamma ? Variable() : parameter;
    return layer_norm(x, gamma, beta, options);
  }
  return {};
}

Replacements fuse_layer_norm(const FunctionGraph& graph, ApplyNode& node) {
  static const OpDef& add_op = op_def("Add");
  static const OpDef& mul_op = op_def("Mul");
  if (node.num_inputs() != 2) return {};
  const ProvenanceScope scope(node.provenance(), /*forced=*/true);
  Variable replacement;
  if (&node.op() == &add_op) {
    replacement = fold_parameter(graph, node, /*is_gamma=*/false);
  } else if (const std::optional<Normalisation> found = match_normalisation(graph, node)) {
    replacement = layer_norm(found->x, Variable(), Variable(),
                             {.axis = found->axis, .epsilon = found->epsilon});
  } else if (&node.op() == &mul_op) {
    replacement = fold_parameter(graph, node, /*is_gamma=*/true);
  }
  if (!replacement.defined() || !(replacement.type() == node.output(0).type())) return {};
  return {replacement};
}
}  // namespace

LocalRule layer_norm_rule() {
  return {
      "fuse_layer_norms", {&op_def("TrueDiv"), &op_def("Mul"), &op_def("Add")}, fuse_layer_norm};
}

}  // namespace tscope::rewrite
