// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/allocator.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define TSCOPE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TSCOPE_TEST_ASAN 1
#endif
#endif

namespace tscope {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(BlockCache, ReleasedLargeBlockServesTheNextRequestOfAboutItsSize) {
  release_cached_blocks();
  TrackingAllocator& allocator = default_allocator();
  const AllocatorStats before = allocator.stats();
  void* block = allocator.allocate(kMiB);
  allocator.deallocate(block, kMiB);
  // Released: no longer live, but kept.
  EXPECT_EQ(allocator.stats().live_bytes, before.live_bytes);
  EXPECT_GE(allocator.stats().cached_bytes, static_cast<std::int64_t>(kMiB));
  // A request up to a fifth smaller takes it back, aligned as every tensor block.
  void* again = allocator.allocate(kMiB - kMiB / 5);
  EXPECT_EQ(again, block);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(again) % kTensorAlignment, 0u);
  EXPECT_EQ(allocator.stats().cached_bytes, before.cached_bytes);
  allocator.deallocate(again, kMiB - kMiB / 5);
  // A request of half the size would pin twice what it needs: it gets a block of its own.
  void* half = allocator.allocate(kMiB / 2);
  EXPECT_NE(half, block);
  allocator.deallocate(half, kMiB / 2);
  release_cached_blocks();
  EXPECT_EQ(allocator.stats().cached_bytes, 0);
  EXPECT_EQ(allocator.stats().live_bytes, before.live_bytes);
}

TEST(BlockCache, SmallBlocksAreLeftToMalloc) {
  release_cached_blocks();
  TrackingAllocator& allocator = default_allocator();
  void* small = allocator.allocate(64 << 10);
  allocator.deallocate(small, 64 << 10);
  EXPECT_EQ(allocator.stats().cached_bytes, 0);
}

TEST(BlockCache, KeepsAtMostItsBudgetAndLetsTheOldestGo) {
  release_cached_blocks();
  TrackingAllocator& allocator = default_allocator();
  // 300 blocks of 1 MiB, released in order (malloc maps them without touching their pages).
  std::vector<void*> blocks;
  for (int i = 0; i < 300; ++i) blocks.push_back(allocator.allocate(kMiB));
  for (void* block : blocks) allocator.deallocate(block, kMiB);
  const std::int64_t cached = allocator.stats().cached_bytes;
  EXPECT_LE(cached, std::int64_t{256} << 20);
  EXPECT_GE(cached, std::int64_t{250} << 20);
  // The first released went first: the next requests get only blocks released last.
  std::vector<void*> taken;
  for (int i = 0; i < 10; ++i) taken.push_back(allocator.allocate(kMiB));
  for (void* block : taken) {
    EXPECT_EQ(std::count(blocks.begin(), blocks.begin() + 40, block), 0);
    allocator.deallocate(block, kMiB);
  }
  release_cached_blocks();
}

TEST(BlockCache, ScratchVectorsShareTheKeptBlocks) {
  release_cached_blocks();
  const float* first = nullptr;
  {
    std::vector<float, ScratchAllocator<float>> gates(kMiB / sizeof(float), 1.0F);
    first = gates.data();
  }
  // Scratch is not tensor memory: the live bytes do not count it.
  const std::int64_t live = default_allocator().stats().live_bytes;
  std::vector<float, ScratchAllocator<float>> again(kMiB / sizeof(float), 0.0F);
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(default_allocator().stats().live_bytes, live);
  EXPECT_EQ(again.back(), 0.0F);
}

// fork() copies only the forking thread. Another thread may hold the cache's lock at that moment
// (here one releases and takes large blocks without pause); the child's first large allocation
// must not wait for it forever.
TEST(BlockCache, ForkWhileAnotherThreadUsesTheCache) {
  TrackingAllocator& allocator = default_allocator();
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      void* block = allocator.allocate(kMiB);
      allocator.deallocate(block, kMiB);
    }
  });
  int hung = 0;
  for (int round = 0; round < 100 && hung == 0; ++round) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      void* block = allocator.allocate(kMiB);
      allocator.deallocate(block, kMiB);
      ::_exit(0);
    }
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (::waitpid(child, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ++hung;
        ::kill(child, SIGKILL);
        ::waitpid(child, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (hung == 0) EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << round;
  }
  stop = true;
  busy.join();
  EXPECT_EQ(hung, 0);
  release_cached_blocks();
}

// Kept blocks are not handed back to malloc, so AddressSanitizer would not see a tensor used after
// its release; the cache poisons them instead (the dev preset runs this).
TEST(BlockCacheDeathTest, AKeptBlockReadsAsFreedUnderAddressSanitizer) {
#ifndef TSCOPE_TEST_ASAN
  GTEST_SKIP() << "built without AddressSanitizer";
#else
  release_cached_blocks();
  TrackingAllocator& allocator = default_allocator();
  void* block = allocator.allocate(kMiB);
  allocator.deallocate(block, kMiB);
  EXPECT_DEATH(static_cast<volatile float*>(block)[0] = 1.0F, "use-after-poison");
  void* again = allocator.allocate(kMiB);  // taken back: writable again
  static_cast<float*>(again)[0] = 1.0F;
  allocator.deallocate(again, kMiB);
  release_cached_blocks();
#endif
}

}  // namespace
}  // namespace tscope
