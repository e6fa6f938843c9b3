// SPDX-License-Identifier: Apache-2.0
#pragma once
// Target shapes for reshapes built from static extents where they are known and Shape_i nodes
// where they are not, so converted models keep symbolic dims (a batch size) symbolic.
#include <cstdint>
#include <vector>

#include "tscope/graph/variable.h"

namespace tscope::onnx {

class ShapeBuilder {
 public:
  /// Appends a fixed extent (-1: inferred by the reshape).
  void add(std::int64_t extent);
  /// Appends x's extent on `axis`: the static dim, or Shape_i(x) when unknown.
  void add_axis_of(const Variable& x, int axis);
  /// Appends the product of x's extents on [first, last): static when all are known.
  void add_product_of(const Variable& x, int first, int last);
  /// Reshapes x to the shape built so far.
  [[nodiscard]] Variable reshape(const Variable& x) const;

 private:
  // Per entry: the extent, or (symbolic_[i] defined) a Shape_i-based Variable. A static -1 means
  // "inferred", so symbolic_ is what tells the two apart.
  std::vector<std::int64_t> static_;
  std::vector<Variable> symbolic_;
};

}  // namespace tscope::onnx
