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
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  /// Returns `bytes` of memory aligned to kTensorAlignment; throws Error(OutOfMemory) naming the
  /// byte count when the request cannot be met.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* pointer, std::size_t bytes) noexcept = 0;
};

/// Aligned heap allocator with thread-safe live/peak counters.
class TrackingAllocator final : public Allocator {
 public:
  void* allocate(std::size_t bytes) override;
  void deallocate(void* pointer, std::size_t bytes) noexcept override;

  [[nodiscard]] AllocatorStats stats() const noexcept;
  /// Sets the peak to the current live bytes, so a window's own peak can be measured.
  void reset_peak() noexcept;

 private:
  std::atomic<std::int64_t> live_bytes_{0};
  std::atomic<std::int64_t> peak_bytes_{0};
  std::atomic<std::int64_t> allocation_count_{0};
  std::atomic<std::int64_t> allocated_bytes_total_{0};
};

/// The process-wide allocator used when none is given.
[[nodiscard]] TrackingAllocator& default_allocator() noexcept;

}  // namespace tscope

#pragma GCC visibility pop
