// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Buffers the allow_gc VM releases during one call, handed to later nodes of the same call that
/// need about as many bytes, and let go at the end of the call. A chain of small nodes then
/// allocates a couple of buffers per call instead of one per node. Bounded (kMaxBuffers buffers
/// of at most kMaxBufferBytes), so it can hold back at most 512 KiB beyond what the graph's
/// simulated peak counts.
#include <cstddef>
#include <memory>
#include <vector>

#include "tscope/core/buffer.h"

#pragma GCC visibility push(default)

namespace tscope {

class BufferPool {
 public:
  static constexpr std::size_t kMaxBuffers = 8;
  static constexpr std::size_t kMaxBufferBytes = 64 * 1024;

  BufferPool() { buffers_.reserve(kMaxBuffers); }

  /// Keeps `buffer` when nobody else holds it, it is small and there is room; else drops it.
  void give(std::shared_ptr<Buffer>&& buffer) noexcept;
  /// A kept buffer of at least `bytes` and at most about twice that, or nullptr.
  [[nodiscard]] std::shared_ptr<Buffer> take(std::size_t bytes) noexcept;
  /// Lets every kept buffer go.
  void clear() noexcept { buffers_.clear(); }
  [[nodiscard]] std::size_t size() const noexcept { return buffers_.size(); }

 private:
  std::vector<std::shared_ptr<Buffer>> buffers_;  // capacity reserved: give() never allocates
};

}  // namespace tscope

#pragma GCC visibility pop
