// SPDX-License-Identifier: Apache-2.0
#include "tscope/graph/provenance.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/registry.h"
#include "tscope/rewrite/pattern.h"
#include "tscope/rewrite/pow_rules.h"

namespace tscope::rewrite {
namespace {
Replacements specialize_pow(const FunctionGraph&, ApplyNode& node) {
  if (node.num_inputs() != 2 || !is_scalar_constant(node.input(1))) return {};
  const Variable& base = node.input(0);
  const double exponent = node.input(1).constant_value().at(0);
  const ProvenanceScope scope(node.provenance(), /*forced=*/true);
  Variable replacement;
  if (exponent == 2.0) {
    replacement = sqr(base);
  } else if (is_floating(base.dtype()) && exponent == 0.5) {
    replacement = sqrt(base);
  } else if (is_floating(base.dtype()) && exponent == -1.0) {
    replacement = reciprocal(base);
  } else if (is_floating(base.dtype()) && exponent == -0.5) {
    replacement = reciprocal(sqrt(base));
  } else {
    return {};
  }
  if (!(replacement.type() == node.output(0).type())) return {};
  return {replacement};
}
}  // namespace

LocalRule pow_rule() { return {"specialize_pow", {&op_def("Pow")}, specialize_pow}; }

}  // namespace tscope::rewrite
