// SPDX-License-Identifier: Apache-2.0
// gemm_through_row_split: a product of flattened rows, reshaped back and plus a bias row (a
// Linear layer on 3-D activations, as exported models write it), becomes a Gemm under the
// reshape with the same values; adds that broadcast otherwise stay adds. transpose_through_dot22:
// a transposed product becomes the product of the transposed operands, so that its readers get
// a contiguous matrix. fuse_gemm_gelu: an erf GELU after a Gemm, or after a reshape of one, as
// exporters spell it, becomes the Gemm's activation.
#include <cmath>
#include <map>
#include <string>

#include "support/graph_counts.h"
#include "support/test_util.h"

namespace tscope {
namespace {
using testing::op_counts;

// (batch, seq, k) . (k, n) as the importer writes it: flatten, Dot22, reshape back.
Variable linear_3d(const Variable& x, const Variable& w, std::int64_t batch, std::int64_t seq) {
  const Variable flat = reshape(x, {batch * seq, x.type().dims[2]});
  return reshape(dot(flat, w), {batch, seq, w.type().dims[1]});
}

Function compile(const std::vector<Variable>& inputs, const Variable& y, bool rule) {
  FunctionOptions options;
  options.excluded_rewrites = {"fuse_elementwise"};
  if (!rule) options.excluded_rewrites.push_back("gemm_through_row_split");
  return function(inputs, {y}, {}, options);
}

TEST(GemmThroughRowSplit, BiasRowAfterAReshapedProductBecomesGemm) {
  const Variable x = tensor(DType::Float32, {2, 5, 8}, "x");
  const Variable w = constant(testing::random_tensor(DType::Float32, {8, 6}, 1), "w");
  const Tensor bias_value = testing::random_tensor(DType::Float32, {6}, 2);
  const Tensor xs = testing::random_tensor(DType::Float32, {2, 5, 8}, 3);
  // The bias as a vector, as (1, 1, n), and on either side of the add.
  const Variable row = constant(bias_value, "b");
  const Variable row3 = constant(bias_value.reshaped({1, 1, 6}), "b3");
  for (const Variable& y : {linear_3d(x, w, 2, 5) + row, row3 + linear_3d(x, w, 2, 5)}) {
    Function rewritten = compile({x}, y, true);
    Function plain = compile({x}, y, false);
    const std::map<std::string, int> ops = op_counts(rewritten);
    EXPECT_EQ(ops.count("Dot22"), 0u);
    EXPECT_EQ(ops.at("Gemm"), 1);
    EXPECT_EQ(ops.count("Add"), 0u);
    EXPECT_EQ(op_counts(plain).at("Dot22"), 1);
    EXPECT_TRUE(testing::all_close(rewritten({xs})[0], plain({xs})[0], 1e-5, 1e-6));
  }
}

TEST(GemmThroughRowSplit, OtherAddsStay) {
  const Variable x = tensor(DType::Float32, {2, 5, 8}, "x");
  const Variable w = constant(testing::random_tensor(DType::Float32, {8, 6}, 1), "w");
  // A term that varies along the rows, and a reshape that does not keep n last.
  const Variable per_row = constant(testing::random_tensor(DType::Float32, {2, 5, 6}, 4), "t");
  EXPECT_EQ(op_counts(compile({x}, linear_3d(x, w, 2, 5) + per_row, true)).count("Gemm"), 0u);
  const Variable flat = reshape(x, {10, 8});
  const Variable regrouped = reshape(dot(flat, w), {2, 30});
  const Variable row = constant(testing::random_tensor(DType::Float32, {30}, 5), "b");
  EXPECT_EQ(op_counts(compile({x}, regrouped + row, true)).count("Gemm"), 0u);
}

// Whether some DimShuffle of the function's graph reads a Dot22's output.
bool transposes_a_product(const Function& f) {
  for (const ApplyNode* node : f.graph().toposort()) {
    if (node->op().name != "DimShuffle") continue;
    const ApplyNode* producer = node->input(0).owner();
    if (producer != nullptr && producer->op().name == "Dot22") return true;
  }
  return false;
}

TEST(TransposeThroughDot22, TransposedProductBecomesProductOfTransposes) {
  // A weight gradient as the backward pass of x . W^T writes it, read by an SGD-like update.
  const Variable x = tensor(DType::Float32, {7, 5}, "x");
  const Variable g = tensor(DType::Float32, {7, 3}, "g");
  const Variable w = tensor(DType::Float32, {3, 5}, "w");
  const Variable y = w - transpose(dot(transpose(x), g)) * 0.5;
  FunctionOptions with_rule, without_rule;
  without_rule.excluded_rewrites = {"transpose_through_dot22"};
  Function rewritten = function({x, g, w}, {y}, {}, with_rule);
  Function plain = function({x, g, w}, {y}, {}, without_rule);
  EXPECT_FALSE(transposes_a_product(rewritten));
  EXPECT_TRUE(transposes_a_product(plain));
  const std::vector<Tensor> values = {testing::random_tensor(DType::Float32, {7, 5}, 1),
                                      testing::random_tensor(DType::Float32, {7, 3}, 2),
                                      testing::random_tensor(DType::Float32, {3, 5}, 3)};
  EXPECT_TRUE(testing::all_close(rewritten(values)[0], plain(values)[0], 1e-5, 1e-6));
}

TEST(TransposeThroughDot22, ProductReadTwiceStays) {
  const Variable x = tensor(DType::Float32, {4, 6}, "x");
  const Variable z = tensor(DType::Float32, {6, 4}, "z");
  const Variable product = dot(x, z);
  Function f = function({x, z}, {transpose(product) + 1.0, product}, {});
  EXPECT_TRUE(transposes_a_product(f));
  EXPECT_EQ(testing::op_counts(f).at("Dot22"), 1);
}

// The GELU spellings of exporters: x * (1 + erf(x / sqrt 2)) * 0.5 (torch), and
// (x * 0.5) * (1 + erf(x * (1 / sqrt 2))).
Variable gelu_torch(const Variable& x) { return x * (erf(x / std::sqrt(2.0)) + 1.0) * 0.5; }
Variable gelu_scaled_first(const Variable& x) {
  return (x * 0.5) * (1.0 + erf(x * (1.0 / std::sqrt(2.0))));
}

Function compile_gelu(const std::vector<Variable>& inputs,
                      const std::vector<Variable>& outputs,
                      bool rule) {
  FunctionOptions options;
  if (!rule) options.excluded_rewrites = {"fuse_gemm_gelu"};
  return function(inputs, outputs, {}, options);
}

int fused_gemms(const Function& f) {
  int count = 0;
  for (const ApplyNode* node : f.graph().toposort()) {
    count += node->op().name == "Gemm" && node->attrs().has("activation") ? 1 : 0;
  }
  return count;
}

TEST(FuseGemmGelu, GeluAfterALinearLayerBecomesTheGemmsActivation) {
  const Variable x = tensor(DType::Float32, {2, 5, 8}, "x");
  const Variable w = constant(testing::random_tensor(DType::Float32, {8, 6}, 1, -2.0, 2.0), "w");
  const Variable b = constant(testing::random_tensor(DType::Float32, {6}, 2), "b");
  const Variable m = matrix(DType::Float32, "m", {10, 8});
  const Tensor xs = testing::random_tensor(DType::Float32, {2, 5, 8}, 3);
  const Tensor ms = testing::random_tensor(DType::Float32, {10, 8}, 4);
  // On 3-D activations (a reshape of the Gemm), on a matrix, in both spellings.
  for (const Variable& y :
       {gelu_torch(linear_3d(x, w, 2, 5) + b), gelu_scaled_first(dot(m, w) + b)}) {
    Function fused = compile_gelu({x, m}, {y}, true);
    Function plain = compile_gelu({x, m}, {y}, false);
    EXPECT_EQ(fused_gemms(fused), 1);
    EXPECT_EQ(fused.graph().toposort().size(), y.rank() == 3 ? 3u : 1u);  // (reshapes,) the Gemm
    EXPECT_EQ(fused_gemms(plain), 0);
    EXPECT_TRUE(testing::all_close(fused({xs, ms})[0], plain({xs, ms})[0], 1e-5, 1e-6));
  }
}

TEST(FuseGemmGelu, OtherProductsStay) {
  const Variable m = matrix(DType::Float32, "m", {10, 8});
  const Variable w = constant(testing::random_tensor(DType::Float32, {8, 6}, 1), "w");
  const Variable b = constant(testing::random_tensor(DType::Float32, {6}, 2), "b");
  const Variable h = dot(m, w) + b;
  // The pre-activation read elsewhere, another scale inside the erf, another constant factor.
  EXPECT_EQ(fused_gemms(compile_gelu({m}, {gelu_torch(h), h}, true)), 0);
  EXPECT_EQ(fused_gemms(compile_gelu({m}, {h * (erf(h / 1.5) + 1.0) * 0.5}, true)), 0);
  EXPECT_EQ(fused_gemms(compile_gelu({m}, {h * (erf(h / std::sqrt(2.0)) + 1.0) * 0.25}, true)), 0);
  // A GELU of something else than a Gemm.
  EXPECT_EQ(fused_gemms(compile_gelu({m}, {gelu_torch(m * 2.0)}, true)), 0);
}

}  // namespace
}  // namespace tscope
