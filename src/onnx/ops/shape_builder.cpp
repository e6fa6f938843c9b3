// SPDX-License-Identifier: Apache-2.0
#include "shape_builder.h"

#include "tscope/graph/constructors.h"
#include "tscope/graph/type.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/shape.h"

namespace tscope::onnx {

void ShapeBuilder::add(std::int64_t extent) {
  static_.push_back(extent);
  symbolic_.emplace_back();
}

void ShapeBuilder::add_axis_of(const Variable& x, int axis) {
  const std::int64_t extent = x.type().dims[axis];
  if (extent != kUnknownDim) {
    add(extent);
    return;
  }
  static_.push_back(kUnknownDim);
  symbolic_.push_back(shape_i(x, axis));
}

void ShapeBuilder::add_product_of(const Variable& x, int first, int last) {
  std::int64_t known = 1;
  Variable unknown;
  for (int axis = first; axis < last; ++axis) {
    const std::int64_t extent = x.type().dims[axis];
    if (extent != kUnknownDim) {
      known *= extent;
    } else {
      unknown = unknown.defined() ? unknown * shape_i(x, axis) : shape_i(x, axis);
    }
  }
  if (!unknown.defined()) {
    add(known);
    return;
  }
  static_.push_back(kUnknownDim);
  symbolic_.push_back(known == 1 ? unknown : unknown * static_cast<double>(known));
}

Variable ShapeBuilder::reshape(const Variable& x) const {
  bool all_static = true;
  for (const Variable& extent : symbolic_) all_static = all_static && !extent.defined();
  if (all_static) return tscope::reshape(x, static_);
  std::vector<Variable> extents;
  for (std::size_t i = 0; i < static_.size(); ++i) {
    extents.push_back(symbolic_[i].defined()
                          ? symbolic_[i]
                          : constant(Tensor::scalar(static_cast<double>(static_[i]), DType::Int64)));
  }
  return tscope::reshape(x, make_vector(extents));
}

}  // namespace tscope::onnx
