// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The one interface through which tensor memory is obtained. The default allocator counts live
/// and peak bytes so the memory profiler can print the measured peak next to its simulation.
#include <atomic>
#include <cstddef>
#include <cstdint>

#pragma GCC visibility push(default)

namespace tscope {

inline constexpr std::size_t kTensorAlignment = 64;

struct AllocatorStats {
  std::int64_t live_bytes = 0;
  std::int64_t peak_bytes = 0;
  std::int64_t allocation_count = 0;
  std::int64_t allocated_bytes_total = 0;
  /// Released large blocks kept for reuse (shared by every TrackingAllocator; not live bytes).
  std::int64_t cached_bytes = 0;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  /// Returns `bytes` of memory aligned to kTensorAlignment; throws Error(OutOfMemory) naming the
  /// byte count when the request cannot be met.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* pointer, std::size_t bytes) noexcept = 0;
};

/// Aligned heap allocator with thread-safe live/peak counters. Released blocks of 128 KiB or more
/// are kept (up to 256 MiB, or TSCOPE_BLOCK_CACHE_MB; the oldest let go first) for later requests
/// of about their size, so a function called again reuses memory whose pages are already mapped
/// instead of faulting in fresh ones.
class TrackingAllocator final : public Allocator {
 public:
  void* allocate(std::size_t bytes) override;
  void deallocate(void* pointer, std::size_t bytes) noexcept override;

  [[nodiscard]] AllocatorStats stats() const noexcept;
  /// stats().live_bytes alone: one relaxed load, for the profiler's per-node timeline records.
  [[nodiscard]] std::int64_t live_bytes() const noexcept {
    return live_bytes_.load(std::memory_order_relaxed);
  }
  /// Sets the peak to the current live bytes, so a window's own peak can be measured.
  void reset_peak() noexcept;

 private:
  std::atomic<std::int64_t> live_bytes_{0};
  std::atomic<std::int64_t> peak_bytes_{0};
  std::atomic<std::int64_t> allocation_count_{0};
  std::atomic<std::int64_t> allocated_bytes_total_{0};
};

/// Returns the kept large blocks to the C heap (after a large model is done with, say).
void release_cached_blocks() noexcept;

/// Memory for a kernel's own temporaries, aligned to kTensorAlignment and outside the tensor
/// counts; large requests share the kept blocks with tensors. Throws std::bad_alloc.
[[nodiscard]] void* allocate_scratch(std::size_t bytes);
void release_scratch(void* pointer, std::size_t bytes) noexcept;

/// A standard allocator over allocate_scratch, for a kernel's temporary std::vector.
template <class T>
struct ScratchAllocator {
  using value_type = T;
  ScratchAllocator() = default;
  template <class U>
  ScratchAllocator(const ScratchAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit
  T* allocate(std::size_t count) { return static_cast<T*>(allocate_scratch(count * sizeof(T))); }
  void deallocate(T* pointer, std::size_t count) noexcept {
    release_scratch(pointer, count * sizeof(T));
  }
  friend bool operator==(const ScratchAllocator&, const ScratchAllocator&) noexcept { return true; }
};

/// The process-wide allocator used when none is given.
[[nodiscard]] TrackingAllocator& default_allocator() noexcept;

}  // namespace tscope

#pragma GCC visibility pop
