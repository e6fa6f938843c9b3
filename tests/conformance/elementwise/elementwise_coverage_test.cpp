// SPDX-License-Identifier: Apache-2.0
// Walks the op registry: every elementwise OpDef is complete (scalar op, cost, kernels, gradient
// story) and has a row in the case table the forward and gradient tests run.
#include "elementwise_cases.h"
#include "tscope/ops/scalar_op.h"

namespace tscope {
namespace {

TEST(ElementwiseCoverage, EveryElementwiseOpIsCompleteAndTested) {
  int elementwise_ops = 0;
  for (const OpDef* def : op_registry().all()) {
    if (!def->traits.elementwise) continue;
    ++elementwise_ops;
    const std::string name(def->name);
    EXPECT_NE(def->scalar, nullptr) << name << " has no scalar op";
    EXPECT_NE(def->cost, nullptr) << name << " has no cost";
    EXPECT_NE(def->print, nullptr) << name << " has no printed name";
    EXPECT_TRUE(def->reference.available()) << name << " has no reference kernel";
    EXPECT_TRUE(def->fast.available()) << name << " has no fast kernel";
    EXPECT_TRUE(def->pullback != nullptr || def->traits.zero_gradient)
        << name << " has neither a pullback nor zero_gradient";
    EXPECT_FALSE(def->pullback != nullptr && def->traits.zero_gradient)
        << name << " has both a pullback and zero_gradient";
    const testing::ElementwiseCase* c = testing::find_elementwise_case(name);
    ASSERT_NE(c, nullptr) << name << " has no row in elementwise_cases.cpp";
    EXPECT_EQ(c->arity, def->num_inputs) << name;
    EXPECT_FALSE(c->dtypes.empty()) << name;
    if (def->scalar != nullptr) {
      EXPECT_EQ(def->scalar->arity, def->num_inputs) << name;
    }
  }
  // Every row names a registered elementwise op (no stale rows).
  for (const testing::ElementwiseCase& c : testing::elementwise_cases()) {
    const OpDef* def = op_registry().find(c.op);
    ASSERT_NE(def, nullptr) << c.op << " is not registered";
    EXPECT_TRUE(def->traits.elementwise) << c.op;
  }
  EXPECT_EQ(elementwise_ops, static_cast<int>(testing::elementwise_cases().size()));
}

TEST(ElementwiseCoverage, TranscendentalOpsRunOnSimdAndOthersOnTheTypedLoop) {
  for (const OpDef* def : op_registry().all()) {
    if (!def->traits.elementwise || def->scalar == nullptr) continue;
    const std::string name(def->name);
    if (def->scalar->transcendental) {
      EXPECT_EQ(def->fast.name, "simd") << name;
    } else if (name != "Sqrt") {  // sqrt is cheap, but its vector path is still worth it
      EXPECT_EQ(def->fast.name, "cpu") << name;
    }
    EXPECT_EQ(def->reference.name, "ref") << name;
  }
}

TEST(ElementwiseCoverage, CostCountsFlopsAndBytes) {
  const OpDef& add = op_def("Add");
  const std::vector<Dims> inputs = {{3, 4}, {4}};
  const std::vector<Dims> outputs = {{3, 4}};
  const std::vector<DType> dtypes = {DType::Float32, DType::Float32};
  const Attrs attrs;
  const Cost cost = add.cost(CostContext{add, inputs, outputs, dtypes, attrs});
  EXPECT_EQ(cost.flops, 12.0);
  EXPECT_EQ(cost.bytes, (12.0 + 4.0 + 12.0) * 4.0);
}

}  // namespace
}  // namespace tscope
