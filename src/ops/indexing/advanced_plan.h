// SPDX-License-Identifier: Apache-2.0
#pragma once
// General integer-array indexing shared by AdvancedSubtensor and AdvancedIncSubtensor: the type
// rule and, at run time, the element offset in x of every element of the indexed result.
//
// Supported: integer arrays of any rank on consecutive axes (they broadcast against each other
// with NumPy's rules and their broadcast shape replaces those axes in place), and slices with
// constant parts on the other axes. Arrays separated by a slice, and slices with symbolic parts,
// raise Unsupported.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "index_spec.h"

namespace tscope::ops::detail {

/// Static dims of x[entries]; checks the entries and the index inputs.
Dims infer_advanced_dims(std::string_view op_name,
                         const Type& x,
                         const std::vector<SpecEntry>& entries,
                         std::span<const Variable> index_inputs);

struct AdvancedPlan {
  Dims output_shape;
  /// For each element of the result (row-major), its offset in elements from element 0 of a
  /// tensor of x's shape with the strides the plan was made for.
  std::vector<std::int64_t> offsets;
};

/// Resolves slices and reads, broadcasts and range-checks the index arrays (node inputs from
/// `first_index_input` on, in entry order); throws IndexOutOfRange / ShapeMismatch naming the node.
AdvancedPlan plan_advanced(const KernelContext& ctx,
                           const Dims& shape,
                           const Dims& strides,
                           const std::vector<SpecEntry>& entries,
                           int first_index_input);

}  // namespace tscope::ops::detail
