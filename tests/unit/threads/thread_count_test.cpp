// SPDX-License-Identifier: Apache-2.0
// The thread count: one setting for oneDNN's primitives, the parallel loops and OpenBLAS, owned by
// the thread that sets it, restored by its scope, refused below one.
#include "tscope/threads/thread_count.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "tscope/core/error.h"
#include "tscope/ops/linalg.h"
#include "tscope/threads/parallel_for.h"

namespace tscope {
namespace {

TEST(ThreadCount, ScopeSetsEveryLibraryAndRestoresThePreviousCount) {
  const int before = threads::thread_count();
  const std::string blas_before = blas_description();
  {
    const threads::ScopedThreadCount three(3);
    EXPECT_EQ(threads::thread_count(), 3);
    EXPECT_EQ(threads::parallel_threads(), 3);
    EXPECT_NE(blas_description().find("; 3 threads;"), std::string::npos) << blas_description();
    EXPECT_EQ(threads::describe_threads().rfind("3 threads, wait policy ", 0), 0U)
        << threads::describe_threads();
    {
      const threads::ScopedThreadCount one(1);
      EXPECT_EQ(threads::thread_count(), 1);
      EXPECT_NE(blas_description().find("; 1 threads;"), std::string::npos) << blas_description();
    }
    EXPECT_EQ(threads::thread_count(), 3);
  }
  EXPECT_EQ(threads::thread_count(), before);
  EXPECT_EQ(blas_description(), blas_before);
}

TEST(ThreadCount, BelowOneIsRefusedAndChangesNothing) {
  const int before = threads::thread_count();
  for (int bad : {0, -2}) {
    try {
      threads::set_thread_count(bad);
      ADD_FAILURE() << "set_thread_count(" << bad << ") returned";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(error.what()).find("at least 1"), std::string::npos) << error.what();
    }
  }
  EXPECT_EQ(threads::thread_count(), before);
}

// OpenMP's rule: the count belongs to the thread that sets it. A function called on another thread
// runs with that thread's own count (the process default until it sets one).
TEST(ThreadCount, EachThreadHasItsOwnCount) {
  int default_count = 0;
  std::thread([&] { default_count = threads::thread_count(); }).join();
  ASSERT_GE(default_count, 1);
  const threads::ScopedThreadCount one(default_count + 1);
  int other_thread_count = 0;
  int other_after_setting = 0;
  std::thread([&] {
    other_thread_count = threads::thread_count();
    threads::set_thread_count(1);
    other_after_setting = threads::thread_count();
  }).join();
  EXPECT_EQ(other_thread_count, default_count);
  EXPECT_EQ(other_after_setting, 1);
  EXPECT_EQ(threads::thread_count(), default_count + 1);
}

}  // namespace
}  // namespace tscope
