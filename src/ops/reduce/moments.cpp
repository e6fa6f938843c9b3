// SPDX-License-Identifier: Apache-2.0
// var and stddev: composites over Mean, Sub, Sqr and Sqrt, so their gradients, fast kernels and
// profile rows come from those ops. Nodes report the user's call site and "var" / "stddev".
#include "tscope/graph/provenance.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/reduce.h"

namespace tscope {

Variable var(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims,
             const std::source_location& location) {
  ProvenanceScope scope("var", location);
  const Variable centred = x - mean(x, axes, /*keepdims=*/true, location);
  return mean(sqr(centred, location), axes, keepdims, location);
}

Variable stddev(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims,
                const std::source_location& location) {
  ProvenanceScope scope("stddev", location);
  return elementwise("Sqrt", {var(x, axes, keepdims, location)}, location);
}

}  // namespace tscope
