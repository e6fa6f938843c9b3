// SPDX-License-Identifier: Apache-2.0
// Steps and epochs (steps.h) and input-wait zones, on the injected zone clock (zone_test_clock.h),
// so every duration is exact; their JSON round trip and merge.
#include "tscope/profile/steps.h"

#include <string>

#include "support/test_util.h"
#include "tscope/profile/json_export.h"
#include "tscope/profile/report_text.h"
#include "tscope/profile/zone_recorder.h"
#include "tscope/profile/zones.h"
#include "zone_test_clock.h"

namespace steps_header_only {
void mark(int epochs, int steps);
}

namespace tscope {
namespace {

using zone_test::kTickNs;

class Steps : public zone_test::InjectedClockTest {};

// Reads the clock `ticks` times: the only way time passes under the injected clock.
void spend_ticks(int ticks) {
  for (int i = 0; i < ticks; ++i) (void)profile::zone_clock_ns();
}

void wait_for_input(int ticks) {
  TSCOPE_INPUT_WAIT("next batch");
  spend_ticks(ticks);
}

void work(int ticks) {
  TSCOPE_ZONE("work");
  spend_ticks(ticks);
}

TEST_F(Steps, RecordEachStepsDurationWaitAndExamples) {
  profile::mark_step();  // starts the count: no step yet
  for (int step = 0; step < 3; ++step) {
    wait_for_input(5 * (step + 1));
    work(20);
    profile::mark_step(8);
  }
  const profile::HostRecord host = profile::snapshot_host_zones();
  ASSERT_EQ(host.steps.size(), 3U);
  EXPECT_TRUE(host.epochs.empty());
  for (std::size_t i = 0; i < 3; ++i) {
    const profile::StepRecord& step = host.steps[i];
    // The input-wait zone: entry read, the zone's own entry and exit reads around the spent
    // ticks; zone_clock_ns before and after them is what counts as the wait.
    EXPECT_EQ(step.input_wait_ns, (5 * static_cast<std::int64_t>(i + 1) + 2) * kTickNs) << i;
    EXPECT_EQ(step.examples, 8);
    EXPECT_GT(step.duration_ns, step.input_wait_ns + 20 * kTickNs);
    if (i > 0) {
      EXPECT_EQ(step.start_ns, host.steps[i - 1].start_ns + host.steps[i - 1].duration_ns);
    }
  }
}

TEST_F(Steps, EpochsKeepTheirOwnStepsAndZones) {
  profile::mark_epoch(0);
  for (int step = 0; step < 2; ++step) {
    work(10);
    profile::mark_step();
  }
  profile::mark_epoch(1);
  for (int step = 0; step < 3; ++step) {
    work(10);
    work(10);
    profile::mark_step();
  }
  const profile::HostRecord host = profile::snapshot_host_zones();
  ASSERT_EQ(host.steps.size(), 5U);
  ASSERT_EQ(host.epochs.size(), 2U);
  const profile::EpochRecord& first = host.epochs[0];
  const profile::EpochRecord& second = host.epochs[1];
  EXPECT_EQ(first.epoch, 0);
  EXPECT_EQ(first.first_step, 0);
  EXPECT_EQ(first.step_count, 2);
  EXPECT_EQ(second.epoch, 1);
  EXPECT_EQ(second.first_step, 2);
  EXPECT_EQ(second.step_count, 3);
  EXPECT_EQ(host.steps[1].epoch, 0);
  EXPECT_EQ(host.steps[2].epoch, 1);
  EXPECT_LE(first.end_ns, second.start_ns);
  EXPECT_EQ(second.end_ns, host.steps[4].start_ns + host.steps[4].duration_ns);
  // Each epoch counts only the zones that closed while it ran: 2 and 6 calls of "work".
  auto work_calls = [&](const profile::EpochRecord& epoch) {
    for (const profile::ZoneTotals& zone : epoch.zones) {
      if (host.sites[static_cast<std::size_t>(zone.site)].name == "work") return zone.call_count;
    }
    return std::int64_t{0};
  };
  EXPECT_EQ(work_calls(first), 2);
  EXPECT_EQ(work_calls(second), 6);
}

TEST_F(Steps, TheHeaderAloneIsEnoughToMarkSteps) {
  steps_header_only::mark(2, 3);
  const profile::HostRecord host = profile::snapshot_host_zones();
  EXPECT_EQ(host.epochs.size(), 2U);
  EXPECT_EQ(host.steps.size(), 6U);
}

TEST_F(Steps, MarksRecordNothingWhileZonesAreOff) {
  profile::set_zones_enabled(false);
  profile::mark_epoch(0);
  profile::mark_step();
  profile::mark_step();
  wait_for_input(3);
  EXPECT_TRUE(profile::snapshot_host_zones().empty());
}

TEST_F(Steps, ReportShowsEpochsAndRoundTripsThroughJson) {
  for (int epoch = 0; epoch < 2; ++epoch) {
    profile::mark_epoch(epoch);
    for (int step = 0; step < 4; ++step) {
      wait_for_input(epoch == 0 ? 50 : 5);
      work(20);
      profile::mark_step(16);
    }
  }
  profile::Profile profile;
  profile.host = profile::snapshot_host_zones();
  const std::string text = profile::render_text(profile, {});
  EXPECT_NE(text.find("Input pipeline\n=============="), std::string::npos) << text;
  EXPECT_NE(text.find("Epochs and steps"), std::string::npos) << text;
  EXPECT_NE(text.find("First epoch against the others"), std::string::npos) << text;
  EXPECT_NE(text.find("Step time over 8 steps"), std::string::npos) << text;
  const profile::ProfileDocument read =
      profile::parse_profile_json(profile::to_json_text({profile}, {}), "steps.json");
  ASSERT_EQ(read.profiles.size(), 1U);
  EXPECT_EQ(profile::render_text(read.profiles[0], {}), text);
  EXPECT_EQ(read.profiles[0].host.steps.size(), 8U);
  EXPECT_EQ(read.profiles[0].host.epochs.size(), 2U);
}

TEST_F(Steps, JsonWithAnEpochOutsideItsStepsIsAParseError) {
  profile::mark_epoch(0);
  work(3);
  profile::mark_step();
  profile::Profile profile;
  profile.host = profile::snapshot_host_zones();
  profile.host.epochs[0].step_count = 7;
  const std::string text = profile::to_json_text({profile}, {});
  try {
    (void)profile::parse_profile_json(text, "bad.json");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Parse);
    EXPECT_NE(error.message().find("/profiles/0/host/epochs/0/step_count"), std::string::npos)
        << error.message();
  }
}

TEST_F(Steps, MergedHostsKeepEachSidesEpochsPointingAtTheirSteps) {
  profile::mark_epoch(3);
  work(2);
  profile::mark_step();
  work(2);
  profile::mark_step();
  const profile::HostRecord host = profile::snapshot_host_zones();
  const profile::HostRecord merged = profile::merge_host_records(host, host);
  ASSERT_EQ(merged.steps.size(), 4U);
  ASSERT_EQ(merged.epochs.size(), 2U);
  EXPECT_EQ(merged.epochs[1].first_step, 2);
  for (const profile::ZoneTotals& zone : merged.epochs[1].zones) {
    EXPECT_EQ(merged.sites[static_cast<std::size_t>(zone.site)].name,
              host.sites[static_cast<std::size_t>(zone.site) - host.sites.size()].name);
  }
}

}  // namespace
}  // namespace tscope
