// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/allocator.h"

#include <pthread.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <system_error>

#include "block_cache.h"
#include "tscope/core/error.h"

namespace tscope {

namespace {

// Aligned blocks come from plain malloc plus one alignment's worth of slack, the original pointer
// stored just below the aligned one. glibc's aligned_alloc bypasses its per-thread cache and
// splits chunks, which made a small tensor's allocation and release several times slower; plain
// malloc of small sizes is served from that cache. malloc returns 16-byte aligned memory, so the
// gap below the aligned pointer is at least 16 bytes: room for the stored pointer.
// A large block also stores its capacity there, below the pointer.
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

// At most this many bytes of released large blocks are kept for reuse (block_cache.h), unless
// TSCOPE_BLOCK_CACHE_MB says otherwise (0 turns the cache off).
constexpr std::size_t kDefaultBlockCacheMiB = 256;
constexpr const char* kBlockCacheVariable = "TSCOPE_BLOCK_CACHE_MB";

std::size_t block_cache_budget_bytes() {
  const char* text = std::getenv(kBlockCacheVariable);  // NOLINT(concurrency-mt-unsafe): read once
  if (text == nullptr) return kDefaultBlockCacheMiB << 20;
  std::size_t mib = 0;
  const char* end = text + std::strlen(text);
  const auto [stop, error] = std::from_chars(text, end, mib);
  if (error != std::errc() || stop != end || mib > (std::size_t{1} << 20)) {
    // The allocator cannot throw here (the first tensor may be a static's); say so once.
    std::fprintf(stderr, "tscope: %s=\"%s\" is not a size in MiB (0 to 1048576); using %zu\n",
                 kBlockCacheVariable, text, kDefaultBlockCacheMiB);
    return kDefaultBlockCacheMiB << 20;
  }
  return mib << 20;
}

// Large blocks are sized in whole pages, so requests a few bytes apart share kept blocks.
constexpr std::size_t kLargeBlockGranule = 4096;

// Shared by every TrackingAllocator (their counters stay their own); leaked like
// default_allocator(), as tensors may be released during static destruction.
detail::BlockCache& block_cache();

detail::BlockCache& make_block_cache() {
  auto* cache = new detail::BlockCache(block_cache_budget_bytes(), free_aligned_block);
  ::pthread_atfork([] { block_cache().lock_for_fork(); }, [] { block_cache().unlock_after_fork(); },
                   [] { block_cache().unlock_after_fork(); });
  return *cache;
}

detail::BlockCache& block_cache() {
  static detail::BlockCache& cache = make_block_cache();
  return cache;
}

// Made while the library loads, before any thread of the program runs: made on first use
// instead, a fork() while another thread was making it would leave the child waiting forever on
// the half-done initialisation.
[[maybe_unused]] const detail::BlockCache& g_cache_at_load = block_cache();

std::size_t& stored_capacity(void* pointer) { return static_cast<std::size_t*>(pointer)[-2]; }

bool is_large(std::size_t rounded) { return rounded >= detail::BlockCache::kMinBlockBytes; }

std::size_t round_to_alignment(std::size_t bytes) {
  return (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
}

// A large block from the cache or, failing that, a fresh one of whole granules.
void* large_block(std::size_t rounded) {
  if (const detail::BlockCache::Found found = block_cache().take(rounded); found.block != nullptr) {
    return found.block;
  }
  const std::size_t capacity =
      (rounded + kLargeBlockGranule - 1) / kLargeBlockGranule * kLargeBlockGranule;
  void* pointer = aligned_block(capacity);
  if (pointer != nullptr) stored_capacity(pointer) = capacity;
  return pointer;
}

// A block of at least `bytes` (a zero-size request still gets a valid unique pointer), or null.
void* obtain_block(std::size_t bytes) {
  const std::size_t rounded = round_to_alignment(bytes);
  return is_large(rounded) ? large_block(rounded)
                           : aligned_block(rounded == 0 ? kTensorAlignment : rounded);
}

// Gives back a block obtain_block(bytes) returned: a large one to the cache.
void release_block(void* pointer, std::size_t bytes) noexcept {
  if (is_large(round_to_alignment(bytes))) {
    block_cache().keep(pointer, stored_capacity(pointer));
  } else {
    free_aligned_block(pointer);
  }
}

}  // namespace

void* TrackingAllocator::allocate(std::size_t bytes) {
  // Whole alignment units, so vector loops may read a tensor's last unit; a zero-size tensor
  // still gets a valid unique pointer.
  // Requests near SIZE_MAX would wrap the rounding below to a small block.
  if (bytes > static_cast<std::size_t>(INT64_MAX) - 2 * kTensorAlignment) {
    throw_error(ErrorKind::OutOfMemory, "out of memory allocating {} bytes (live {} bytes)", bytes,
                live_bytes_.load());
  }
  void* pointer = obtain_block(bytes);
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
  release_block(pointer, bytes);
  live_bytes_.fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
}

AllocatorStats TrackingAllocator::stats() const noexcept {
  return {live_bytes_.load(), peak_bytes_.load(), allocation_count_.load(),
          allocated_bytes_total_.load(), static_cast<std::int64_t>(block_cache().cached_bytes())};
}

void TrackingAllocator::reset_peak() noexcept { peak_bytes_.store(live_bytes_.load()); }

void release_cached_blocks() noexcept { block_cache().release_all(); }

void* allocate_scratch(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT64_MAX) - 2 * kTensorAlignment) throw std::bad_alloc();
  void* pointer = obtain_block(bytes);
  if (pointer == nullptr) throw std::bad_alloc();
  return pointer;
}

void release_scratch(void* pointer, std::size_t bytes) noexcept {
  if (pointer != nullptr) release_block(pointer, bytes);
}

TrackingAllocator& default_allocator() noexcept {
  // Leaked: tensors held by static objects are released during static destruction, in any order.
  static TrackingAllocator& allocator = *new TrackingAllocator();
  return allocator;
}

namespace {
// Made while the library loads, like the block cache, so that no fork() can catch a thread in the
// middle of making it.
[[maybe_unused]] const TrackingAllocator& g_allocator_at_load = default_allocator();
}  // namespace

}  // namespace tscope
