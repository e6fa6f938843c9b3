// SPDX-License-Identifier: Apache-2.0
#include "tscope/graph/type.h"

#include <fmt/format.h>

#include "tscope/core/checked_math.h"
#include "tscope/core/tensor.h"

namespace tscope {

bool Type::is_fully_known() const noexcept {
  for (std::int64_t extent : dims) {
    if (extent == kUnknownDim) return false;
  }
  return true;
}

bool Type::accepts(const Tensor& tensor) const noexcept {
  if (!tensor.defined() || tensor.dtype() != dtype || tensor.rank() != rank()) return false;
  for (int axis = 0; axis < rank(); ++axis) {
    if (dims[axis] != kUnknownDim && dims[axis] != tensor.shape()[axis]) return false;
  }
  return true;
}

std::string Type::to_string() const {
  return fmt::format("TensorType({}, {})", dtype_name(dtype), dims.to_string());
}

void check_type_extents(const Type& type, std::string_view what) {
  Dims known;
  for (const std::int64_t extent : type.dims) {
    if (extent != kUnknownDim) known.push_back(extent);
  }
  (void)checked_byte_count(known, type.dtype, what);
}

Type unknown_dims_type(DType dtype, int rank) { return Type{dtype, Dims::filled(rank, kUnknownDim)}; }

}  // namespace tscope
