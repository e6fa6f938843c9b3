// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/allocator.h"

#include <cstdint>
#include <cstdlib>
#include <new>

#include "tscope/core/error.h"

namespace tscope {

namespace {

// Aligned blocks come from plain malloc plus one alignment's worth of slack, the original pointer
// stored just below the aligned one. glibc's aligned_alloc bypasses its per-thread cache and
// splits chunks, which made a small tensor's allocation and release several times slower; plain
// malloc of small sizes is served from that cache. malloc returns 16-byte aligned memory, so the
// gap below the aligned pointer is at least 16 bytes: room for the stored pointer.
static_assert(kTensorAlignment >= 2 * sizeof(void*));

void* aligned_block(std::size_t bytes) {
  void* raw = std::malloc(bytes + kTensorAlignment);
  if (raw == nullptr) return nullptr;
  const auto address = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (address + kTensorAlignment) & ~(kTensorAlignment - 1);
  reinterpret_cast<void**>(aligned)[-1] = raw;
  return reinterpret_cast<void*>(aligned);
}

void free_aligned_block(void* pointer) { std::free(static_cast<void**>(pointer)[-1]); }

}  // namespace

void* TrackingAllocator::allocate(std::size_t bytes) {
  // Whole alignment units, so vector loops may read a tensor's last unit; a zero-size tensor
  // still gets a valid unique pointer.
  // Requests near SIZE_MAX would wrap the rounding below to a small block.
  if (bytes > static_cast<std::size_t>(INT64_MAX) - 2 * kTensorAlignment) {
    throw_error(ErrorKind::OutOfMemory, "out of memory allocating {} bytes (live {} bytes)", bytes,
                live_bytes_.load());
  }
  const std::size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  void* pointer = aligned_block(rounded == 0 ? kTensorAlignment : rounded);
  if (pointer == nullptr) {
    throw_error(ErrorKind::OutOfMemory, "out of memory allocating {} bytes (live {} bytes)", bytes,
                live_bytes_.load());
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
  free_aligned_block(pointer);
  live_bytes_.fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
}

AllocatorStats TrackingAllocator::stats() const noexcept {
  return {live_bytes_.load(), peak_bytes_.load(), allocation_count_.load(),
          allocated_bytes_total_.load()};
}

void TrackingAllocator::reset_peak() noexcept { peak_bytes_.store(live_bytes_.load()); }

TrackingAllocator& default_allocator() noexcept {
  // Leaked: tensors held by static objects are released during static destruction, in any order.
  static TrackingAllocator& allocator = *new TrackingAllocator();
  return allocator;
}

}  // namespace tscope
