// SPDX-License-Identifier: Apache-2.0
#include "block_cache.h"

#include <sanitizer/asan_interface.h>

#include <algorithm>

namespace tscope::detail {

BlockCache::BlockCache(std::size_t budget_bytes, FreeBlock free_block)
    : budget_bytes_(budget_bytes), free_block_(free_block) {
  // keep() never holds more entries than this, so it (called from a noexcept deallocate) never
  // allocates.
  entries_.reserve(std::min(budget_bytes / kMinBlockBytes + 1, kMaxEntries));
}

BlockCache::Found BlockCache::take(std::size_t bytes) noexcept {
  const std::size_t most = bytes + bytes / 8 * kSlackEighths;
  std::lock_guard lock(mutex_);
  // The entries are few (each is at least kMinBlockBytes of a bounded budget): a scan for the
  // tightest fit is cheaper than keeping an ordered index up to date.
  auto best = entries_.end();
  for (auto entry = entries_.begin(); entry != entries_.end(); ++entry) {
    if (entry->capacity < bytes || entry->capacity > most) continue;
    if (best == entries_.end() || entry->capacity < best->capacity) best = entry;
  }
  if (best == entries_.end()) return {};
  const Found found{best->block, best->capacity};
  ASAN_UNPOISON_MEMORY_REGION(found.block, found.capacity);
  cached_bytes_ -= best->capacity;
  *best = entries_.back();
  entries_.pop_back();
  return found;
}

void BlockCache::keep(void* block, std::size_t capacity) noexcept {
  if (capacity > budget_bytes_ || capacity < kMinBlockBytes) {
    free_block_(block);
    return;
  }
  std::lock_guard lock(mutex_);
  while (cached_bytes_ + capacity > budget_bytes_ || entries_.size() == entries_.capacity()) {
    const auto oldest =
        std::min_element(entries_.begin(), entries_.end(),
                         [](const Entry& a, const Entry& b) { return a.stamp < b.stamp; });
    ASAN_UNPOISON_MEMORY_REGION(oldest->block, oldest->capacity);
    free_block_(oldest->block);
    cached_bytes_ -= oldest->capacity;
    *oldest = entries_.back();
    entries_.pop_back();
  }
  // Under AddressSanitizer a kept block reads as freed memory, so a tensor used after its
  // release is still reported although its block was not handed back to malloc.
  ASAN_POISON_MEMORY_REGION(block, capacity);
  entries_.push_back({block, capacity, next_stamp_++});
  cached_bytes_ += capacity;
}

void BlockCache::release_all() noexcept {
  std::lock_guard lock(mutex_);
  for (const Entry& entry : entries_) {
    ASAN_UNPOISON_MEMORY_REGION(entry.block, entry.capacity);
    free_block_(entry.block);
  }
  entries_.clear();
  cached_bytes_ = 0;
}

std::size_t BlockCache::cached_bytes() const noexcept {
  return cached_bytes_.load(std::memory_order_relaxed);
}

}  // namespace tscope::detail
