// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/buffer_pool.h"

#include "tscope/core/allocator.h"

namespace tscope {

void BufferPool::give(std::shared_ptr<Buffer>&& buffer) noexcept {
  if (!held_only_here(buffer) || buffer->size_bytes() > kMaxBufferBytes ||
      buffers_.size() == kMaxBuffers) {
    buffer.reset();
    return;
  }
  buffers_.push_back(std::move(buffer));
}

std::shared_ptr<Buffer> BufferPool::take(std::size_t bytes) noexcept {
  for (std::size_t i = 0; i < buffers_.size(); ++i) {
    const std::size_t size = buffers_[i]->size_bytes();
    // Not much bigger than asked, so a small tensor never pins a large block.
    if (size >= bytes && size <= 2 * bytes + kTensorAlignment) {
      std::shared_ptr<Buffer> found = std::move(buffers_[i]);
      buffers_[i] = std::move(buffers_.back());
      buffers_.pop_back();
      return found;
    }
  }
  return nullptr;
}

}  // namespace tscope
