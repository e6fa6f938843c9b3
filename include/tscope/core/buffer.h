// SPDX-License-Identifier: Apache-2.0
#pragma once
/// A block of tensor memory owned through shared_ptr; views share it.
#include <atomic>
#include <cstddef>
#include <memory>

#include "tscope/core/allocator.h"

#pragma GCC visibility push(default)

#if defined(__SANITIZE_THREAD__)
#define TSCOPE_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSCOPE_THREAD_SANITIZER 1
#endif
#endif

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

/// Whether `buffer` has at most `holders` holders, all known to the caller (this reference among
/// them), so that its contents may be overwritten. The last other holder may have read the data on
/// another thread (a result returned by a call, dropped by whichever thread used it): use_count()
/// is a relaxed read, so an acquire follows it: that thread's reads happen before our writes.
[[nodiscard]] inline bool held_by_at_most(const std::shared_ptr<Buffer>& buffer,
                                          long holders) noexcept {
  if (buffer == nullptr || buffer.use_count() > holders) return false;
#if defined(TSCOPE_THREAD_SANITIZER)
  // ThreadSanitizer does not model fences: an acquire-release operation on the count itself (a
  // reference taken and dropped) gives it the same ordering.
  std::shared_ptr<Buffer> probe = buffer;
  probe.reset();
#else
  std::atomic_thread_fence(std::memory_order_acquire);  // no instruction on x86
#endif
  return true;
}

/// held_by_at_most(buffer, 1): the caller's reference is the only one.
[[nodiscard]] inline bool held_only_here(const std::shared_ptr<Buffer>& buffer) noexcept {
  return held_by_at_most(buffer, 1);
}

}  // namespace tscope

#pragma GCC visibility pop
