// SPDX-License-Identifier: Apache-2.0
// spin_until: returns as soon as the condition holds, and gives up at its deadline.
#include "tscope/threads/spin_wait.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace tscope {
namespace {
using Clock = std::chrono::steady_clock;

TEST(SpinWait, ReturnsWhenAnotherThreadSetsTheCondition) {
  std::atomic<bool> flag{false};
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    flag.store(true, std::memory_order_release);
  });
  const bool done = threads::spin_until([&] { return flag.load(std::memory_order_acquire); },
                                        Clock::now() + std::chrono::seconds(30));
  setter.join();
  EXPECT_TRUE(done);
}

TEST(SpinWait, GivesUpAtTheDeadline) {
  const auto start = Clock::now();
  const bool done = threads::spin_until([] { return false; }, start + std::chrono::milliseconds(2));
  EXPECT_FALSE(done);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(2));
}

TEST(SpinWait, AConditionAlreadyTrueNeedsNoTime) {
  EXPECT_TRUE(threads::spin_until([] { return true; }, Clock::now() - std::chrono::seconds(1)));
}

}  // namespace
}  // namespace tscope
