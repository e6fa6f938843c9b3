// SPDX-License-Identifier: Apache-2.0
// Composite nnet builders: they dispatch on the target's dtype or compose elementwise ops, inside
// a provenance scope so errors and profiles name the loss the user called.
#include "tscope/graph/apply.h"
#include "tscope/graph/provenance.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/registry.h"

namespace tscope {

Variable categorical_crossentropy(const Variable& coding_dist, const Variable& targets,
                                  const std::source_location& location) {
  ProvenanceScope scope("categorical_crossentropy", location);
  if (is_integral(targets.dtype())) return crossentropy_categorical_1hot(coding_dist, targets, location);
  return -sum(targets * log(coding_dist), {coding_dist.rank() - 1}, false, location);
}

Variable softmax_cross_entropy(const Variable& logits, const Variable& targets,
                               const std::source_location& location) {
  ProvenanceScope scope("softmax_cross_entropy", location);
  if (is_integral(targets.dtype())) {
    return apply_op1(op_def("CrossentropySoftmax1Hot"), {logits, targets}, {}, location);
  }
  return -sum(targets * log_softmax(logits, location), {logits.rank() - 1}, false, location);
}

Variable binary_crossentropy(const Variable& output, const Variable& target,
                             const std::source_location& location) {
  ProvenanceScope scope("binary_crossentropy", location);
  return -(target * log(output) + (1.0 - target) * log(1.0 - output));
}

}  // namespace tscope
