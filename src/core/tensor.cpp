// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/tensor.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tscope/core/strided_copy.h"

namespace tscope {
namespace {
// Element offset (in elements) of a row-major flat index under `shape`/`strides`.
std::int64_t strided_offset(std::int64_t flat, const Dims& shape, const Dims& strides) {
  std::int64_t offset = 0;
  for (int axis = shape.rank() - 1; axis >= 0; --axis) {
    const std::int64_t extent = shape[axis];
    offset += (flat % extent) * strides[axis];
    flat /= extent;
  }
  return offset;
}

// A double as T. Converting an out-of-range or NaN double to an integer is undefined in C++, and
// such values arrive from data (an ONNX constant, a fill value): they saturate, NaN becomes 0.
template <class T>
T from_double(double value) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (std::isnan(value)) return T{0};
    // The bounds as doubles: max() of 64-bit types rounds up to 2^63 or 2^64, hence >=.
    if (value >= static_cast<double>(std::numeric_limits<T>::max())) {
      return std::numeric_limits<T>::max();
    }
    if (value <= static_cast<double>(std::numeric_limits<T>::min())) {
      return std::numeric_limits<T>::min();
    }
  }
  return static_cast<T>(value);
}

template <class T>
void store_double(void* base, std::int64_t index, double value) {
  static_cast<T*>(base)[index] = from_double<T>(value);
}
}  // namespace

Tensor Tensor::empty(DType dtype, const Dims& shape, Allocator& allocator) {
  const std::int64_t bytes = checked_byte_count(shape, dtype, "tensor");
  // The buffer is made for this shape, so over_buffer's size check would only repeat the one above.
  Tensor tensor;
  tensor.buffer_ = std::make_shared<Buffer>(static_cast<std::size_t>(bytes), allocator);
  tensor.dtype_ = dtype;
  tensor.shape_ = shape;
  tensor.strides_ = contiguous_strides(shape);
  tensor.offset_ = 0;
  return tensor;
}

Tensor Tensor::over_buffer(std::shared_ptr<Buffer> buffer, DType dtype, const Dims& shape) {
  // Once per allocation: a short buffer would let every kernel write past its end.
  TSCOPE_CHECK(buffer != nullptr && static_cast<std::int64_t>(buffer->size_bytes()) >=
                                        checked_byte_count(shape, dtype, "tensor"),
               "buffer too small for shape " + shape.to_string());
  Tensor tensor;
  tensor.buffer_ = std::move(buffer);
  tensor.dtype_ = dtype;
  tensor.shape_ = shape;
  tensor.strides_ = contiguous_strides(shape);
  tensor.offset_ = 0;
  return tensor;
}

Tensor Tensor::zeros(DType dtype, const Dims& shape) {
  Tensor tensor = empty(dtype, shape);
  std::memset(tensor.raw_data(), 0, static_cast<std::size_t>(tensor.nbytes()));
  return tensor;
}

Tensor Tensor::full(DType dtype, const Dims& shape, double value) {
  Tensor tensor = empty(dtype, shape);
  const std::int64_t count = tensor.numel();
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(tensor.raw_data());
    const T converted = from_double<T>(value);
    for (std::int64_t i = 0; i < count; ++i) out[i] = converted;
  });
  return tensor;
}

Tensor Tensor::scalar(double value, DType dtype) { return full(dtype, Dims{}, value); }

Tensor Tensor::from_doubles(DType dtype, const Dims& shape, const std::vector<double>& values) {
  const std::int64_t count = checked_product(shape, "Tensor::from_doubles");
  if (static_cast<std::int64_t>(values.size()) != count) {
    throw_error(ErrorKind::ShapeMismatch, "{} values given for shape {} ({} elements)",
                values.size(), shape.to_string(), count);
  }
  Tensor tensor = empty(dtype, shape);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (std::size_t i = 0; i < values.size(); ++i) {
      store_double<T>(tensor.raw_data(), static_cast<std::int64_t>(i), values[i]);
    }
  });
  return tensor;
}

bool Tensor::is_contiguous() const noexcept {
  std::int64_t expected = 1;
  for (int axis = shape_.rank() - 1; axis >= 0; --axis) {
    if (shape_[axis] != 1 && strides_[axis] != expected) return false;
    expected *= shape_[axis];
  }
  return true;
}

Tensor Tensor::view(const Dims& shape, const Dims& strides, std::int64_t offset) const {
  Tensor tensor;
  tensor.buffer_ = buffer_;
  tensor.dtype_ = dtype_;
  tensor.shape_ = shape;
  tensor.strides_ = strides;
  tensor.offset_ = offset;
  return tensor;
}

Tensor Tensor::reshaped(const Dims& shape) const {
  // Checked: a wrapped count could equal numel() and give a view larger than the buffer.
  const std::int64_t count = checked_product(shape, "reshape");
  if (count != numel()) {
    throw_error(ErrorKind::ShapeMismatch, "cannot reshape {} ({} elements) to {} ({} elements)",
                shape_.to_string(), numel(), shape.to_string(), count);
  }
  const Tensor source = contiguous();
  return source.view(shape, contiguous_strides(shape), source.offset_);
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor result = empty(dtype_, shape_);
  const std::int64_t count = numel();
  const std::size_t item = dtype_size(dtype_);
  if (is_contiguous()) {
    std::memcpy(result.raw_data(), raw_data(), static_cast<std::size_t>(count) * item);
    return result;
  }
  detail::copy_strided(raw_data(), shape_, strides_, item, result.raw_data());
  return result;
}

Tensor Tensor::astype(DType dtype) const {
  if (dtype == dtype_) return clone();
  return from_doubles(dtype, shape_, to_doubles());
}

double Tensor::at(std::int64_t flat_index) const {
  const std::int64_t element = offset_ + strided_offset(flat_index, shape_, strides_);
  return visit_dtype(dtype_, [&](auto tag) -> double {
    using T = decltype(tag);
    return static_cast<double>(static_cast<const T*>(buffer_->data())[element]);
  });
}

std::vector<double> Tensor::to_doubles() const {
  std::vector<double> values(static_cast<std::size_t>(numel()));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = at(static_cast<std::int64_t>(i));
  return values;
}

std::string Tensor::to_string(int max_elements) const {
  if (!defined()) return "<undefined tensor>";
  std::string text = fmt::format("{} {} [", dtype_name(dtype_), shape_.to_string());
  const std::int64_t count = numel();
  for (std::int64_t i = 0; i < count; ++i) {
    if (i == max_elements) {
      text += ", ...";
      break;
    }
    if (i > 0) text += ", ";
    text += fmt::format("{:g}", at(i));
  }
  return text + "]";
}

void Tensor::check_dtype(DType expected) const {
  if (expected != dtype_) {
    throw_error(ErrorKind::TypeMismatch, "tensor has dtype {}, accessed as {}", dtype_name(dtype_),
                dtype_name(expected));
  }
}

}  // namespace tscope
