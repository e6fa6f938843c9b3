// SPDX-License-Identifier: Apache-2.0
// ONNX MatMul (NumPy matmul semantics) and Gemm.
#include "../converter.h"
#include "shape_builder.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/shape.h"

namespace tscope::onnx {
namespace {

using Outputs = std::vector<Variable>;

/// (..., m, k) . (k, n): the leading axes fold into rows, one BLAS product, then unfold.
Variable stacked_times_matrix(const Variable& a, const Variable& b) {
  const int rank = a.rank();
  ShapeBuilder rows;
  rows.add_product_of(a, 0, rank - 1);
  rows.add_axis_of(a, rank - 1);
  const Variable product = dot(rows.reshape(a), b);
  ShapeBuilder result;
  for (int axis = 0; axis < rank - 1; ++axis) result.add_axis_of(a, axis);
  result.add_axis_of(b, 1);
  return result.reshape(product);
}

/// (..., m, k) . (..., k, n) with equal batch axes: folded into one batched product.
Variable batched_product(NodeContext& ctx, const Variable& a, const Variable& b) {
  const int rank = a.rank();
  for (int axis = 0; axis < rank - 2; ++axis) {
    const std::int64_t da = a.type().dims[axis];
    const std::int64_t db = b.type().dims[axis];
    if (da != db || da == kUnknownDim) {
      if (da == kUnknownDim && db == kUnknownDim) continue;  // checked by BatchedDot at run time
      ctx.unsupported("MatMul whose batch axes broadcast");
    }
  }
  if (rank == 3) return batched_dot(a, b);
  ShapeBuilder fold_a;
  fold_a.add_product_of(a, 0, rank - 2);
  fold_a.add_axis_of(a, rank - 2);
  fold_a.add_axis_of(a, rank - 1);
  ShapeBuilder fold_b;
  fold_b.add_product_of(b, 0, rank - 2);
  fold_b.add_axis_of(b, rank - 2);
  fold_b.add_axis_of(b, rank - 1);
  const Variable product = batched_dot(fold_a.reshape(a), fold_b.reshape(b));
  ShapeBuilder result;
  for (int axis = 0; axis < rank - 1; ++axis) result.add_axis_of(a, axis);
  result.add_axis_of(b, rank - 1);
  return result.reshape(product);
}

Outputs convert_matmul(NodeContext& ctx) {
  const Variable& a = ctx.input(0);
  const Variable& b = ctx.input(1);
  if (a.rank() <= 2 && b.rank() <= 2) return {dot(a, b)};
  if (b.rank() == 2) return {stacked_times_matrix(a, b)};
  if (a.rank() == b.rank()) return {batched_product(ctx, a, b)};
  ctx.unsupported("MatMul of ranks " + std::to_string(a.rank()) + " and " +
                  std::to_string(b.rank()));
}

Outputs convert_gemm(NodeContext& ctx) {
  Variable a = ctx.input(0);
  Variable b = ctx.input(1);
  if (ctx.attribute_int("transA", 0) != 0) a = transpose(a);
  if (ctx.attribute_int("transB", 0) != 0) b = transpose(b);
  const double alpha = ctx.attribute_float("alpha", 1.0);
  const double beta = ctx.attribute_float("beta", 1.0);
  ctx.ignore_attribute("broadcast");  // opset 6's flag; broadcasting is always on from 7
  Variable product = dot(a, b);
  if (alpha != 1.0) product = product * alpha;
  if (!ctx.has_input(2) || beta == 0.0) return {product};
  const Variable& c = ctx.input(2);
  return {beta == 1.0 ? product + c : product + c * beta};
}

}  // namespace

void register_linalg_converters(ConverterTable& table) {
  table.add("Gemm", 6, convert_gemm);
  table.add("MatMul", 1, convert_matmul);
}

}  // namespace tscope::onnx
