// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/dims.h"

#include <algorithm>

#include "tscope/core/error.h"

namespace tscope {

Dims::Dims(std::initializer_list<std::int64_t> values)
    : Dims(std::span<const std::int64_t>(values.begin(), values.size())) {}

Dims::Dims(std::span<const std::int64_t> values) {
  if (values.size() > static_cast<std::size_t>(kMaxRank)) {
    throw_error(ErrorKind::Unsupported, "rank {} exceeds the maximum rank {}", values.size(),
                kMaxRank);
  }
  std::copy(values.begin(), values.end(), values_.begin());
  rank_ = static_cast<int>(values.size());
}

Dims Dims::filled(int rank, std::int64_t value) {
  Dims dims;
  dims.resize(rank, value);
  return dims;
}

void Dims::push_back(std::int64_t value) {
  if (rank_ == kMaxRank) {
    throw_error(ErrorKind::Unsupported, "rank exceeds the maximum rank {}", kMaxRank);
  }
  values_[rank_++] = value;
}

void Dims::resize(int rank, std::int64_t fill) {
  if (rank < 0 || rank > kMaxRank) {
    throw_error(ErrorKind::Unsupported, "rank {} is outside 0..{}", rank, kMaxRank);
  }
  for (int i = rank_; i < rank; ++i) values_[i] = fill;
  rank_ = rank;
}

void Dims::throw_product_overflow() const {
  detail::throw_internal("product fits in int64", __FILE__, __LINE__,
                         "the element count of shape " + to_string() + " overflows int64");
}

std::string Dims::to_string() const {
  std::string text = "(";
  for (int i = 0; i < rank_; ++i) {
    if (i > 0) text += ", ";
    text += values_[i] < 0 ? std::string("?") : std::to_string(values_[i]);
  }
  if (rank_ == 1) text += ",";
  text += ")";
  return text;
}

Dims contiguous_strides(const Dims& shape) {
  Dims strides = Dims::filled(shape.rank(), 1);
  std::int64_t stride = 1;
  for (int axis = shape.rank() - 1; axis >= 0; --axis) {
    strides[axis] = stride;
    stride *= std::max<std::int64_t>(shape[axis], 1);
  }
  return strides;
}

Dims broadcast_shapes(const Dims& a, const Dims& b) {
  const int rank = std::max(a.rank(), b.rank());
  Dims result = Dims::filled(rank, 1);
  for (int i = 0; i < rank; ++i) {
    const int ia = a.rank() - rank + i;
    const int ib = b.rank() - rank + i;
    const std::int64_t da = ia >= 0 ? a[ia] : 1;
    const std::int64_t db = ib >= 0 ? b[ib] : 1;
    if (da == db || db == 1) {
      result[i] = da;
    } else if (da == 1) {
      result[i] = db;
    } else {
      throw_error(ErrorKind::ShapeMismatch, "shapes {} and {} cannot be broadcast together",
                  a.to_string(), b.to_string());
    }
  }
  return result;
}

int normalize_axis(std::int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    throw_error(ErrorKind::IndexOutOfRange, "axis {} is out of range for rank {}", axis, rank);
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace tscope
