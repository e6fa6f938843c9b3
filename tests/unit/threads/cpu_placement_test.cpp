// SPDX-License-Identifier: Apache-2.0
// move_thread_off_cpu, which the parallel loops use to separate a worker from the caller's CPU.
// Each case runs on a thread of its own, so the test runner's affinity is never touched.
#include "tscope/threads/cpu_placement.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

namespace tscope {
namespace {
using threads::move_thread_off_cpu;

cpu_set_t own_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  return set;
}

template <class Body>
void on_own_thread(const Body& body) {
  std::thread thread(body);
  thread.join();
}

TEST(CpuPlacement, MovesTheThreadOffItsCpuAndRestoresItsAffinity) {
  const cpu_set_t runner = own_affinity();
  if (CPU_COUNT(&runner) < 2) GTEST_SKIP() << "needs two CPUs";
  on_own_thread([] {
    const cpu_set_t before = own_affinity();
    const int cpu = sched_getcpu();
    ASSERT_TRUE(move_thread_off_cpu(cpu));
    EXPECT_NE(sched_getcpu(), cpu);
    const cpu_set_t after = own_affinity();
    EXPECT_TRUE(CPU_EQUAL(&before, &after));
  });
}

TEST(CpuPlacement, LeavesAThreadThatMayRunOnlyOnThatCpu) {
  on_own_thread([] {
    const int cpu = sched_getcpu();
    cpu_set_t only;
    CPU_ZERO(&only);
    CPU_SET(cpu, &only);
    ASSERT_EQ(sched_setaffinity(0, sizeof only, &only), 0);
    EXPECT_FALSE(move_thread_off_cpu(cpu));
    EXPECT_EQ(sched_getcpu(), cpu);
    const cpu_set_t after = own_affinity();
    EXPECT_TRUE(CPU_EQUAL(&only, &after));
  });
}

TEST(CpuPlacement, IgnoresCpusOutsideItsAffinity) {
  on_own_thread([] {
    const cpu_set_t before = own_affinity();
    int outside = 0;
    while (outside < CPU_SETSIZE && CPU_ISSET(outside, &before)) ++outside;
    EXPECT_FALSE(move_thread_off_cpu(outside));
    EXPECT_FALSE(move_thread_off_cpu(-1));
    const cpu_set_t after = own_affinity();
    EXPECT_TRUE(CPU_EQUAL(&before, &after));
  });
}

}  // namespace
}  // namespace tscope
