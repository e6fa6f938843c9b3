// SPDX-License-Identifier: Apache-2.0
// The profile's impl column: SLEEF-backed nodes report "simd", typed loops "cpu", reference
// kernels "ref"; and the SIMD path agrees with libm on long inputs in both float dtypes.
#include <cmath>

#include "support/test_util.h"

namespace tscope {
namespace {

std::string impl_of(const profile::FunctionRecord& record, const std::string& op_kind) {
  for (const profile::NodeRecord& node : record.nodes) {
    if (node.op_kind == op_kind) return node.impl;
  }
  return "<no " + op_kind + " node>";
}

TEST(ElementwiseImpl, ProfileShowsSimdForTranscendentalAndCpuForTypedLoop) {
  Variable x = vector(DType::Float32, "x");
  Variable y = exp(x) + tanh(x) * 2.0;
  for (bool reference : {false, true}) {
    FunctionOptions options;
    options.excluded_rewrites = {"fuse_elementwise"};  // one node, one impl per op
    options.profile = true;
    options.reference_kernels = reference;
    Function f = function({x}, {y}, {}, options);
    (void)f({testing::random_tensor(DType::Float32, {64}, 1)});
    const profile::FunctionRecord record = f.profile_record();
    EXPECT_EQ(impl_of(record, "Exp"), reference ? "ref" : "simd");
    EXPECT_EQ(impl_of(record, "Tanh"), reference ? "ref" : "simd");
    EXPECT_EQ(impl_of(record, "Add"), reference ? "ref" : "cpu");
    EXPECT_EQ(impl_of(record, "Mul"), reference ? "ref" : "cpu");
  }
}

TEST(ElementwiseImpl, SimdMatchesLibmOnLongInputs) {
  // 1001 elements: many full vectors plus a tail, in float32 (4 lanes) and float64 (2 lanes).
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Variable x = vector(dtype, "x");
    const Tensor value = testing::random_tensor(dtype, {1001}, 9, -4.0, 4.0);
    const std::vector<Variable> outputs = {exp(x),       exp2(x),       expm1(x),      log(abs(x)),
                                           log2(abs(x)), log10(abs(x)), log1p(abs(x)), sqrt(abs(x)),
                                           tanh(x),      sigmoid(x),    softplus(x),   sin(x),
                                           cos(x),       erf(x),        pow(abs(x), x)};
    const double rtol = dtype == DType::Float32 ? 1e-5 : 1e-13;
    EXPECT_TRUE(testing::fast_matches_reference({x}, outputs, {value}, rtol, 1e-30))
        << dtype_name(dtype);
  }
}

}  // namespace
}  // namespace tscope
