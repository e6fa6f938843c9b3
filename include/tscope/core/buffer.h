// SPDX-License-Identifier: Apache-2.0
#pragma once
/// A block of tensor memory owned through shared_ptr; views share it.
#include <cstddef>
#include <memory>

#include "tscope/core/allocator.h"

namespace tscope {

class Buffer {
 public:
  Buffer(std::size_t size_bytes, Allocator& allocator);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  [[nodiscard]] void* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_bytes_; }

 private:
  Allocator* allocator_;
  std::size_t size_bytes_;
  void* data_;
};

}  // namespace tscope
