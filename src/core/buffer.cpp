// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/buffer.h"

namespace tscope {

Buffer::Buffer(std::size_t size_bytes, Allocator& allocator)
    : allocator_(&allocator), size_bytes_(size_bytes), data_(allocator.allocate(size_bytes)) {}

Buffer::~Buffer() { allocator_->deallocate(data_, size_bytes_); }

}  // namespace tscope
