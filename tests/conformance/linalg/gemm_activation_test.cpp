// SPDX-License-Identifier: Apache-2.0
// Gemm with its erf GELU activation: every kernel path (oneDNN's matmul with the GELU as a
// post-op after a bias row or a full addend, dnnl_sgemm and BLAS with a pass after) against the
// reference loops, which compute the GELU in double; the gradient by finite differences.
#include "support/test_util.h"
#include "tscope/graph/apply.h"

namespace tscope {
namespace {

Variable gemm_gelu(const Variable& z, const Variable& x, const Variable& y, double alpha,
                   double beta) {
  return apply_op1(op_def("Gemm"), {z, x, y},
                   Attrs{{"alpha", alpha}, {"beta", beta}, {"activation", std::string("gelu_erf")}},
                   std::source_location::current());
}

TEST(GemmActivation, GeluMatchesReferenceOnEveryPath) {
  const Variable w = constant(testing::random_tensor(DType::Float32, {40, 70}, 1, -2.0, 2.0), "w");
  const Variable bias = constant(testing::random_tensor(DType::Float32, {70}, 2), "b");
  Variable x = matrix(DType::Float32, "x");
  Variable z = matrix(DType::Float32, "z");
  Variable v = matrix(DType::Float32, "v");
  const std::vector<Variable> outputs{
      gemm_gelu(bias, x, w, 1.0, 1.0),                // bias row: packed, GELU post-op
      gemm_gelu(bias, x, transpose(v), 1.0, 0.0),     // changing weights: dnnl_sgemm, then GELU
      gemm_gelu(z, x, w, 1.0, 1.0),                   // (m, n) addend: binary post-op, then GELU
      gemm_gelu(bias, x, w, 2.0, 1.0)};               // alpha 2: dnnl_sgemm, then GELU
  for (const int threads : {1, 2}) {
    const threads::ScopedThreadCount count(threads);
    for (const std::int64_t m : {33, 1}) {
      SCOPED_TRACE(m);
      const int seed = 10 + static_cast<int>(m);
      // Inputs spread widely enough that the product reaches both tails of the GELU.
      EXPECT_TRUE(testing::fast_matches_reference(
          {x, z, v}, outputs,
          {testing::random_tensor(DType::Float32, {m, 40}, seed, -2.0, 2.0),
           testing::random_tensor(DType::Float32, {m, 70}, seed + 1),
           testing::random_tensor(DType::Float32, {70, 40}, seed + 2)},
          1e-4, 1e-5));
    }
  }
}

TEST(GemmActivation, GeluMatchesReferenceInFloat64) {
  Variable z = vector(DType::Float64, "z");
  Variable x = matrix(DType::Float64, "x");
  Variable y = matrix(DType::Float64, "y");
  EXPECT_TRUE(testing::fast_matches_reference(
      {z, x, y}, {gemm_gelu(z, x, y, 0.5, 2.0)},
      {testing::random_tensor(DType::Float64, {7}, 3), testing::random_tensor(DType::Float64, {5, 6}, 4),
       testing::random_tensor(DType::Float64, {6, 7}, 5)},
      1e-10, 1e-12));
}

TEST(GemmActivation, GeluGradientMatchesFiniteDifferences) {
  EXPECT_TRUE(testing::gradient_matches_numeric(
      [](const auto& v) { return gemm_gelu(v[0], v[1], v[2], 0.5, 2.0); },
      {testing::random_tensor(DType::Float64, {5}, 6), testing::random_tensor(DType::Float64, {3, 4}, 7),
       testing::random_tensor(DType::Float64, {4, 5}, 8)}));
}

TEST(GemmActivation, PrintsTheActivation) {
  Variable z = vector(DType::Float32, "z");
  Variable x = matrix(DType::Float32, "x");
  Variable y = matrix(DType::Float32, "y");
  EXPECT_EQ(gemm_gelu(z, x, y, 1.0, 1.0).owner()->op_string(), "Gemm{no_inplace,gelu_erf}");
}

// An activation other than gelu_erf is refused when the node is built, naming it, so that no
// kernel path can apply a GELU the attribute did not ask for.
TEST(GemmActivation, UnknownActivationIsRefusedAtBuild) {
  Variable z = vector(DType::Float32, "z");
  Variable x = matrix(DType::Float32, "x");
  Variable y = matrix(DType::Float32, "y");
  try {
    (void)apply_op1(op_def("Gemm"), {z, x, y},
                    Attrs{{"alpha", 1.0}, {"beta", 1.0}, {"activation", std::string("relu")}},
                    std::source_location::current());
    FAIL() << "a Gemm with activation 'relu' was built";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("unknown activation 'relu'"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace tscope
