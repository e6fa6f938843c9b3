// SPDX-License-Identifier: Apache-2.0
#pragma once
// Large tensor blocks kept after release for the next request of about the same size.
//
// A training step or a model call allocates and frees the same large tensors every time. glibc
// hands blocks of that size back to the kernel (an mmap'd block's munmap, or trimming the top of
// the heap), so each call faults in fresh zeroed pages again, which costs about as much as
// writing them. Keeping the released blocks avoids the faults. The cache is bounded (a
// byte budget, the oldest block goes first) and can be emptied on demand.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace tscope::detail {

class BlockCache {
 public:
  /// Requests of fewer bytes are left to malloc, whose per-thread cache and bins serve them well.
  static constexpr std::size_t kMinBlockBytes = std::size_t{128} << 10;
  /// A kept block serves a request of up to this share less (in eighths), so a block never pins
  /// much more than what is asked.
  static constexpr std::size_t kSlackEighths = 2;
  /// At most this many blocks are kept, whatever the budget: take() scans them all.
  static constexpr std::size_t kMaxEntries = 4096;

  using FreeBlock = void (*)(void* block);

  /// Keeps at most `budget_bytes`; blocks that leave the cache other than through take() are
  /// handed to `free_block`.
  BlockCache(std::size_t budget_bytes, FreeBlock free_block);
  ~BlockCache() { release_all(); }
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  /// A kept block of at least `bytes` and at most a quarter more, with its capacity; or
  /// {nullptr, 0}. The block leaves the cache.
  struct Found {
    void* block = nullptr;
    std::size_t capacity = 0;
  };
  [[nodiscard]] Found take(std::size_t bytes) noexcept;

  /// Keeps `block` (of `capacity` bytes) for a later take(), freeing the oldest kept blocks while
  /// the budget would be exceeded (or `block` itself when it alone exceeds it). Never allocates.
  void keep(void* block, std::size_t capacity) noexcept;

  /// Frees every kept block.
  void release_all() noexcept;

  [[nodiscard]] std::size_t cached_bytes() const noexcept;

  /// For pthread_atfork: fork() copies only the forking thread, so no other thread may hold the
  /// cache's lock then, or the child's first large allocation would wait for it forever.
  void lock_for_fork() noexcept { mutex_.lock(); }
  void unlock_after_fork() noexcept { mutex_.unlock(); }

 private:
  struct Entry {
    void* block;
    std::size_t capacity;
    std::uint64_t stamp;  ///< order of keep(), for evicting the oldest
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
  std::atomic<std::size_t> cached_bytes_{0};  ///< written under mutex_, read without it
  std::size_t budget_bytes_;
  FreeBlock free_block_;
  std::uint64_t next_stamp_ = 0;
};

}  // namespace tscope::detail
