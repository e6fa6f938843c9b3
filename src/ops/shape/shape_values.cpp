// SPDX-License-Identifier: Apache-2.0
#include "shape_values.h"

#include "tscope/graph/apply.h"

namespace tscope::ops::detail {

std::optional<std::int64_t> static_scalar(const Variable& scalar) {
  if (scalar.rank() != 0) return std::nullopt;
  if (scalar.kind() == VariableKind::Constant) {
    return static_cast<std::int64_t>(scalar.constant_value().at(0));
  }
  const ApplyNode* owner = scalar.owner();
  if (owner != nullptr && owner->op().name == "Shape_i") {
    const Variable& source = owner->input(0);
    const std::int64_t extent = source.type().dims[static_cast<int>(owner->attrs().get_int("i"))];
    if (extent != kUnknownDim) return extent;
  }
  return std::nullopt;
}

std::optional<std::vector<std::optional<std::int64_t>>> static_vector(const Variable& vector) {
  if (vector.rank() != 1 || vector.type().dims[0] == kUnknownDim) return std::nullopt;
  const auto length = static_cast<std::size_t>(vector.type().dims[0]);
  std::vector<std::optional<std::int64_t>> entries(length);
  if (vector.kind() == VariableKind::Constant) {
    for (std::size_t i = 0; i < length; ++i) {
      entries[i] = static_cast<std::int64_t>(vector.constant_value().at(static_cast<std::int64_t>(i)));
    }
    return entries;
  }
  const ApplyNode* owner = vector.owner();
  if (owner != nullptr && owner->op().name == "MakeVector") {
    for (std::size_t i = 0; i < length; ++i) entries[i] = static_scalar(owner->input(static_cast<int>(i)));
  } else if (owner != nullptr && owner->op().name == "Shape") {
    const Dims& dims = owner->input(0).type().dims;
    for (std::size_t i = 0; i < length; ++i) {
      if (dims[static_cast<int>(i)] != kUnknownDim) entries[i] = dims[static_cast<int>(i)];
    }
  }
  return entries;
}

void require_integer(const Variable& v, int rank, std::string_view what) {
  if (!is_integral(v.dtype()) || v.rank() != rank) {
    throw_error(ErrorKind::TypeMismatch, "{} must be an integer tensor of rank {}, got {}", what,
                rank, v.type().to_string());
  }
}

}  // namespace tscope::ops::detail
