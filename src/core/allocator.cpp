// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/allocator.h"

#include <cstdlib>
#include <new>

#include "tscope/core/error.h"

namespace tscope {

void* TrackingAllocator::allocate(std::size_t bytes) {
  // aligned_alloc needs a size that is a multiple of the alignment; a zero-size tensor still gets
  // a valid unique pointer.
  const std::size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  void* pointer = std::aligned_alloc(kTensorAlignment, rounded == 0 ? kTensorAlignment : rounded);
  if (pointer == nullptr) {
    throw_error(ErrorKind::InvalidArgument, "out of memory allocating {} bytes (live {} bytes)",
                bytes, live_bytes_.load());
  }
  const auto size = static_cast<std::int64_t>(bytes);
  const std::int64_t live = live_bytes_.fetch_add(size, std::memory_order_relaxed) + size;
  std::int64_t peak = peak_bytes_.load(std::memory_order_relaxed);
  while (live > peak && !peak_bytes_.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
  allocation_count_.fetch_add(1, std::memory_order_relaxed);
  allocated_bytes_total_.fetch_add(size, std::memory_order_relaxed);
  return pointer;
}

void TrackingAllocator::deallocate(void* pointer, std::size_t bytes) noexcept {
  if (pointer == nullptr) return;
  std::free(pointer);
  live_bytes_.fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
}

AllocatorStats TrackingAllocator::stats() const noexcept {
  return {live_bytes_.load(), peak_bytes_.load(), allocation_count_.load(),
          allocated_bytes_total_.load()};
}

void TrackingAllocator::reset_peak() noexcept { peak_bytes_.store(live_bytes_.load()); }

TrackingAllocator& default_allocator() noexcept {
  static TrackingAllocator allocator;
  return allocator;
}

}  // namespace tscope
