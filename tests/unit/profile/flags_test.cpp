// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "tscope/core/error.h"
#include "tscope/profile/profile_options.h"

namespace tscope::profile {
namespace {

// Runs parse_flags expecting Error(BadFlag); returns its message.
std::string bad_flag_message(std::string_view text) {
  try {
    (void)parse_flags(text);
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::BadFlag) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "no error for '" << text << "'";
  return "";
}

TEST(ProfileFlags, EmptyTextGivesTheDefaults) {
  const ProfileOptions options = parse_flags("");
  EXPECT_FALSE(options.profile);
  EXPECT_FALSE(options.profile_memory);
  EXPECT_FALSE(options.profile_optimizer);
  EXPECT_TRUE(options.allow_gc);
  EXPECT_EQ(options.n_apply, 20);
  EXPECT_EQ(options.n_ops, 20);
  EXPECT_EQ(options.min_memory_size, 1024);
  EXPECT_EQ(options.destination, "stderr");
  EXPECT_FALSE(options.ignore_first_call);
  EXPECT_EQ(options.output_line_width, 512);
  EXPECT_FALSE(options.min_peak_memory);
}

TEST(ProfileFlags, EveryFlagIsParsed) {
  const ProfileOptions options = parse_flags(
      "profile=true, profile_memory=1,profile_optimizer=True,allow_gc=false,profiling.n_apply=7,"
      "profiling.n_ops=3,profiling.min_memory_size=0,profiling.destination=/tmp/p.json,"
      "profiling.ignore_first_call=true,profiling.output_line_width=80,profiling.min_peak_memory="
      "true");
  EXPECT_TRUE(options.profile);
  EXPECT_TRUE(options.profile_memory);
  EXPECT_TRUE(options.profile_optimizer);
  EXPECT_FALSE(options.allow_gc);
  EXPECT_EQ(options.n_apply, 7);
  EXPECT_EQ(options.n_ops, 3);
  EXPECT_EQ(options.min_memory_size, 0);
  EXPECT_EQ(options.destination, "/tmp/p.json");
  EXPECT_TRUE(options.ignore_first_call);
  EXPECT_EQ(options.output_line_width, 80);
  EXPECT_TRUE(options.min_peak_memory);
}

TEST(ProfileFlags, LastValueWinsAndEmptyItemsAreSkipped) {
  const ProfileOptions options = parse_flags(",profiling.n_ops=3,,profiling.n_ops=5,");
  EXPECT_EQ(options.n_ops, 5);
}

TEST(ProfileFlags, UnknownFlagListsTheValidOnes) {
  const std::string message = bad_flag_message("profile=true,profiling.n_aply=3");
  EXPECT_NE(message.find("unknown flag 'profiling.n_aply'"), std::string::npos) << message;
  EXPECT_NE(message.find("profiling.n_apply"), std::string::npos) << message;
  EXPECT_NE(message.find("profiling.destination"), std::string::npos) << message;
}

TEST(ProfileFlags, BadBooleanNamesTheValidValues) {
  const std::string message = bad_flag_message("profile=yes");
  EXPECT_NE(message.find("profile=yes"), std::string::npos) << message;
  EXPECT_NE(message.find("true, false"), std::string::npos) << message;
}

TEST(ProfileFlags, BadIntegersAreRejected) {
  EXPECT_NE(bad_flag_message("profiling.n_apply=0").find(">= 1"), std::string::npos);
  EXPECT_NE(bad_flag_message("profiling.n_ops=abc").find("profiling.n_ops=abc"), std::string::npos);
  EXPECT_NE(bad_flag_message("profiling.min_memory_size=-1").find(">= 0"), std::string::npos);
  EXPECT_NE(bad_flag_message("profiling.output_line_width=12x").find("integer"), std::string::npos);
  EXPECT_NE(bad_flag_message("profiling.n_ops=99999999").find("too large"), std::string::npos);
}

TEST(ProfileFlags, MissingValueAndEmptyDestinationAreRejected) {
  EXPECT_NE(bad_flag_message("profile").find("has no value"), std::string::npos);
  EXPECT_NE(bad_flag_message("profiling.destination=").find("stderr, stdout or a file path"),
            std::string::npos);
}

TEST(ProfileFlags, ViewFilesAreParsedAndChecked) {
  const ProfileOptions options =
      parse_flags("profiling.html=/tmp/p.html,profiling.folded=/tmp/p.folded");
  EXPECT_EQ(options.html, "/tmp/p.html");
  EXPECT_EQ(options.folded, "/tmp/p.folded");
  EXPECT_TRUE(parse_flags("").html.empty());
  EXPECT_NE(bad_flag_message("profiling.html=").find("expected a file path"), std::string::npos);
  EXPECT_NE(bad_flag_message("profiling.folded=").find("expected a file path"), std::string::npos);
  // With profile on, an unwritable view file stops the program when the flags are read.
  try {
    check_destination(parse_flags("profile=true,profiling.folded=/nonexistent-dir/p.folded"));
    ADD_FAILURE() << "no error for a missing directory";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::BadFlag);
    EXPECT_NE(std::string(error.what()).find("profiling.folded=/nonexistent-dir/p.folded"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace tscope::profile
