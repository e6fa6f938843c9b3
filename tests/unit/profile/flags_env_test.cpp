// SPDX-License-Identifier: Apache-2.0
// TSCOPE_FLAGS read from the environment become FunctionOptions' defaults. The test sets the
// variable itself, before anything in the process reads it (the flags are parsed once, and this
// binary holds only this test), so the shell it runs from cannot change the outcome.
#include <cstdlib>

#include "support/test_util.h"
#include "tscope/profile/profile_options.h"

namespace tscope {
namespace {

TEST(ProcessFlags, FunctionOptionsDefaultsComeFromTscopeFlags) {
  ASSERT_EQ(setenv("TSCOPE_FLAGS",  // NOLINT(concurrency-mt-unsafe): no other thread yet
                   "profile=true,profile_memory=true,allow_gc=false,"
                   "profiling.ignore_first_call=true,profiling.n_apply=7",
                   1),
            0);
  const profile::ProfileOptions& flags = profile::process_flags();
  EXPECT_TRUE(flags.profile);
  EXPECT_TRUE(flags.profile_memory);
  EXPECT_FALSE(flags.allow_gc);
  EXPECT_TRUE(flags.ignore_first_call);
  EXPECT_EQ(flags.n_apply, 7);
  const FunctionOptions options;
  EXPECT_TRUE(options.profile);
  EXPECT_TRUE(options.profile_memory);
  EXPECT_FALSE(options.allow_gc);
  EXPECT_TRUE(options.ignore_first_call);
}

}  // namespace
}  // namespace tscope
