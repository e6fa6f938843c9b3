// SPDX-License-Identifier: Apache-2.0
// A ProvenanceScope given an explicit site (what the Python bindings install for a line of a
// Python script) is the creation site of every node built under it: plain builders, composites
// that open their own scope, and the rewritten and gradient nodes derived from them.
#include "support/test_util.h"
#include "tscope/tscope.h"

namespace tscope {
namespace {

Provenance script_line(int line, const char* user_op) {
  return Provenance{SourceSite{"/home/user/train.py", static_cast<std::uint32_t>(line), "main"},
                    user_op};
}

TEST(ProvenanceScope, ExplicitSiteNamesEveryNodeBuiltUnderIt) {
  Variable x = matrix(DType::Float64, "x");
  Variable y;
  {
    ProvenanceScope scope(script_line(12, "softmax"), /*forced=*/false);
    y = softmax(exp(x));  // softmax is a composite with a scope of its own: the outer one wins
  }
  EXPECT_EQ(y.owner()->provenance().site.short_string(), "train.py:12");
  EXPECT_EQ(y.owner()->provenance().user_op, "softmax");
  Variable after = exp(x);  // the scope has ended: back to this file's line
  EXPECT_NE(after.owner()->provenance().site.short_string(), "train.py:12");
}

TEST(ProvenanceScope, GradientAndCompiledNodesKeepTheScriptLine) {
  Variable x = vector(DType::Float64, "x");
  Variable w = shared(Tensor::from_vector<double>({2}, {1.0, 2.0}), "w");
  Variable cost;
  {
    ProvenanceScope scope(script_line(30, "dot"), /*forced=*/false);
    cost = dot(x, w);
  }
  std::vector<Variable> grads;
  {
    ProvenanceScope scope(script_line(31, "grad"), /*forced=*/false);
    grads = grad(cost, {w});
  }
  // grad() names the forward node's line, not the line that asked for the gradient.
  EXPECT_EQ(grads[0].owner()->provenance().site.short_string(), "train.py:30");
  EXPECT_EQ(grads[0].owner()->provenance().user_op.rfind("grad(", 0), 0u);

  FunctionOptions options;
  options.profile = true;
  Function f = function({x}, {cost, grads[0]}, {}, options);
  (void)f({Tensor::from_vector<double>({2}, {3.0, 4.0})});
  for (const profile::NodeRecord& node : f.profile_record().nodes) {
    EXPECT_EQ(node.source_site, "train.py:30") << node.apply_name;
  }
}

}  // namespace
}  // namespace tscope
