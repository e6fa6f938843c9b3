// SPDX-License-Identifier: Apache-2.0
#pragma once
/// A runtime value: a Buffer seen through a dtype, shape, strides (in elements) and an offset.
/// Copies share the buffer; views are tensors over the same buffer with other strides.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tscope/core/allocator.h"
#include "tscope/core/buffer.h"
#include "tscope/core/checked_math.h"
#include "tscope/core/dims.h"
#include "tscope/core/dtype.h"
#include "tscope/core/error.h"

#pragma GCC visibility push(default)

namespace tscope {

class Tensor {
 public:
  /// An undefined tensor (no buffer).
  Tensor() = default;

  /// Uninitialised contiguous tensor. Throws InvalidArgument when the shape has a negative extent
  /// or its byte count overflows (checked_byte_count), OutOfMemory when the allocation fails.
  [[nodiscard]] static Tensor empty(DType dtype, const Dims& shape,
                                    Allocator& allocator = default_allocator());
  [[nodiscard]] static Tensor zeros(DType dtype, const Dims& shape);
  [[nodiscard]] static Tensor full(DType dtype, const Dims& shape, double value);
  /// Rank-0 tensor holding `value` converted to `dtype`.
  [[nodiscard]] static Tensor scalar(double value, DType dtype = DType::Float64);
  /// Contiguous tensor from row-major values; throws ShapeMismatch when the count differs.
  template <class T>
  [[nodiscard]] static Tensor from_vector(const Dims& shape, const std::vector<T>& values);
  /// Contiguous tensor from doubles converted to `dtype`.
  [[nodiscard]] static Tensor from_doubles(DType dtype, const Dims& shape,
                                           const std::vector<double>& values);

  [[nodiscard]] bool defined() const noexcept { return buffer_ != nullptr; }
  [[nodiscard]] DType dtype() const noexcept { return dtype_; }
  [[nodiscard]] const Dims& shape() const noexcept { return shape_; }
  [[nodiscard]] const Dims& strides() const noexcept { return strides_; }
  [[nodiscard]] std::int64_t offset() const noexcept { return offset_; }
  [[nodiscard]] int rank() const noexcept { return shape_.rank(); }
  [[nodiscard]] std::int64_t numel() const { return shape_.product(); }
  /// numel * itemsize: the bytes this tensor's elements occupy (not the buffer's size).
  [[nodiscard]] std::int64_t nbytes() const {
    return numel() * static_cast<std::int64_t>(dtype_size(dtype_));
  }
  [[nodiscard]] bool is_contiguous() const noexcept;
  [[nodiscard]] const std::shared_ptr<Buffer>& buffer() const noexcept { return buffer_; }

  /// Address of element 0 (buffer start + offset).
  [[nodiscard]] void* raw_data() const noexcept {
    return static_cast<char*>(buffer_->data()) +
           offset_ * static_cast<std::int64_t>(dtype_size(dtype_));
  }
  template <class T>
  [[nodiscard]] T* data() const {
    check_dtype(kDTypeOf<T>);
    return static_cast<T*>(raw_data());
  }

  /// A tensor over the same buffer; the caller guarantees the view stays inside it.
  [[nodiscard]] Tensor view(const Dims& shape, const Dims& strides, std::int64_t offset) const;
  /// Re-labels a contiguous tensor's dtype-compatible shape (same numel); throws ShapeMismatch.
  [[nodiscard]] Tensor reshaped(const Dims& shape) const;
  /// This tensor if contiguous, else a contiguous copy.
  [[nodiscard]] Tensor contiguous() const;
  /// Deep contiguous copy.
  [[nodiscard]] Tensor clone() const;
  /// Converted copy.
  [[nodiscard]] Tensor astype(DType dtype) const;

  /// Element at a row-major flat index (honours strides), as double; for tests and printing.
  [[nodiscard]] double at(std::int64_t flat_index) const;
  [[nodiscard]] std::vector<double> to_doubles() const;
  /// "float32 (2, 3) [[1, 2, 3], [4, 5, 6]]" (elements elided beyond `max_elements`).
  [[nodiscard]] std::string to_string(int max_elements = 64) const;

  /// Adopts `buffer` as storage of a contiguous tensor; a buffer too small for the shape is a bug
  /// (Internal).
  [[nodiscard]] static Tensor over_buffer(std::shared_ptr<Buffer> buffer, DType dtype,
                                          const Dims& shape);

 private:
  void check_dtype(DType expected) const;

  std::shared_ptr<Buffer> buffer_;
  DType dtype_ = DType::Float32;
  Dims shape_;
  Dims strides_;
  std::int64_t offset_ = 0;
};

template <class T>
Tensor Tensor::from_vector(const Dims& shape, const std::vector<T>& values) {
  const std::int64_t count = checked_product(shape, "Tensor::from_vector");
  if (static_cast<std::int64_t>(values.size()) != count) {
    throw_error(ErrorKind::ShapeMismatch, "{} values given for shape {} ({} elements)",
                values.size(), shape.to_string(), count);
  }
  Tensor tensor = empty(kDTypeOf<T>, shape);
  T* out = tensor.data<T>();
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return tensor;
}


}  // namespace tscope

#pragma GCC visibility pop
