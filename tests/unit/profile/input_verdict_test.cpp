// SPDX-License-Identifier: Apache-2.0
// The input verdict's arithmetic (input_verdict.h) on constructed host records: thresholds,
// percentiles, throughput if data were free, workers needed, and which zones count as the data
// side.
#include "tscope/profile/input_verdict.h"

#include <string>

#include "support/test_util.h"
#include "tscope/profile/report_text.h"

namespace tscope {
namespace {

profile::HostRecord steps_with_wait(std::int64_t step_ns, std::int64_t wait_ns, int count) {
  profile::HostRecord host;
  for (int i = 0; i < count; ++i) {
    host.steps.push_back({.epoch = 0,
                          .start_ns = i * step_ns,
                          .duration_ns = step_ns,
                          .input_wait_ns = wait_ns,
                          .examples = 32});
  }
  return host;
}

TEST(InputVerdict, ThresholdsAreTensorFlowsTwentyAndFivePercent) {
  EXPECT_EQ(profile::input_bound_of(0.20), profile::InputBound::Highly);
  EXPECT_EQ(profile::input_bound_of(0.1999), profile::InputBound::Moderately);
  EXPECT_EQ(profile::input_bound_of(0.05), profile::InputBound::Moderately);
  EXPECT_EQ(profile::input_bound_of(0.0499), profile::InputBound::Not);
  EXPECT_EQ(profile::compute_input_verdict(steps_with_wait(1000, 200, 4)).level,
            profile::InputBound::Highly);
  EXPECT_EQ(profile::compute_input_verdict(steps_with_wait(1000, 199, 4)).level,
            profile::InputBound::Moderately);
  EXPECT_EQ(profile::compute_input_verdict(steps_with_wait(1000, 49, 4)).level,
            profile::InputBound::Not);
  EXPECT_EQ(profile::compute_input_verdict({}).level, profile::InputBound::Unknown);
}

TEST(InputVerdict, PercentilesUseTheNearestRank) {
  std::vector<std::int64_t> values;
  for (std::int64_t v = 10; v >= 1; --v) values.push_back(v * 100);
  EXPECT_EQ(profile::percentile_ns(values, 50), 500);
  EXPECT_EQ(profile::percentile_ns(values, 90), 900);
  EXPECT_EQ(profile::percentile_ns(values, 100), 1000);
  EXPECT_EQ(profile::percentile_ns(values, 1), 100);
  EXPECT_EQ(profile::percentile_ns({}, 50), 0);
}

TEST(InputVerdict, ThroughputIfDataWereFreeAndWorkersNeeded) {
  // Four steps of 10 ms, 6 ms of it waiting: 4 ms of compute per step, 32 examples each.
  profile::HostRecord host = steps_with_wait(10'000'000, 6'000'000, 4);
  host.steps[3].input_wait_ns = 2'000'000;  // median and p90 differ from the mean
  // Two workers, 9 ms per batch each, one batch per step.
  host.data_sources.push_back(
      {.name = "batches",
       .worker_kind = "thread",
       .queue_capacity = 4,
       .workers =
           {{.label = "worker 0", .batches = 2, .busy_ns = 18'000'000, .lifetime_ns = 20'000'000},
            {.label = "worker 1", .batches = 2, .busy_ns = 18'000'000, .lifetime_ns = 36'000'000}},
       .batches_taken = 4,
       .wait_ns = 20'000'000,
       .occupancy = {3, 1, 0, 0, 0}});
  const profile::InputVerdict verdict = profile::compute_input_verdict(host);
  EXPECT_EQ(verdict.step_count, 4);
  EXPECT_EQ(verdict.input_wait_ns, 20'000'000);
  EXPECT_DOUBLE_EQ(verdict.wait_share, 0.5);
  EXPECT_EQ(verdict.wait_median_ns, 6'000'000);
  EXPECT_EQ(verdict.wait_p90_ns, 6'000'000);
  EXPECT_DOUBLE_EQ(verdict.compute_ns_per_step, 5'000'000);
  EXPECT_DOUBLE_EQ(verdict.steps_per_second, 100);
  EXPECT_DOUBLE_EQ(verdict.free_steps_per_second, 200);
  EXPECT_EQ(verdict.examples, 128);
  ASSERT_EQ(verdict.sources.size(), 1U);
  const profile::DataSourceVerdict& source = verdict.sources[0];
  EXPECT_DOUBLE_EQ(source.empty_share, 0.75);
  EXPECT_DOUBLE_EQ(source.mean_ready, 0.25);
  EXPECT_DOUBLE_EQ(source.batches_per_step, 1);
  EXPECT_DOUBLE_EQ(source.busy_ns_per_batch, 9'000'000);
  ASSERT_EQ(source.utilisation.size(), 2U);
  EXPECT_DOUBLE_EQ(source.utilisation[0], 0.9);
  EXPECT_DOUBLE_EQ(source.utilisation[1], 0.5);
  EXPECT_EQ(source.workers_needed, 2);  // ceil(9 ms x 1 / 5 ms)

  profile::Profile profile;
  profile.host = host;
  const std::string text = profile::render_text(profile, {});
  EXPECT_NE(text.find("Verdict: HIGHLY input-bound: the loop waited for input 50.0%"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("If data were free: 5.00ms per step, 6400.0 examples/s instead of 3200.0 "
                      "(2.00x)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Workers to keep up ('batches'): 2 (now 2)"), std::string::npos) << text;
}

TEST(InputVerdict, DataSideLeavesOutTheTrainingChainWaitsAndFunctions) {
  profile::HostRecord host;
  host.sites = {{.name = "train step", .file = "loop.cpp", .line = 1, .kind = "zone"},
                {.name = "step_fn", .kind = "function"},
                {.name = "voxelize", .file = "data.cpp", .line = 2, .kind = "zone"},
                {.name = "next", .file = "loader.cpp", .line = 3, .kind = "input_wait"},
                {.name = "decode", .file = "data.cpp", .line = 4, .kind = "zone"}};
  profile::ZoneThreadRecord main;
  main.nodes = {{.site = 0, .parent = -1, .call_count = 4, .total_ns = 900, .self_ns = 500},
                {.site = 1, .parent = 0, .call_count = 4, .total_ns = 400, .self_ns = 400},
                {.site = 3, .parent = -1, .call_count = 4, .total_ns = 800, .self_ns = 800}};
  profile::ZoneThreadRecord worker;
  worker.thread_index = 1;
  worker.nodes = {{.site = 2, .parent = -1, .call_count = 4, .total_ns = 700, .self_ns = 600},
                  {.site = 4, .parent = 0, .call_count = 4, .total_ns = 100, .self_ns = 100}};
  host.threads = {main, worker};
  const profile::InputVerdict verdict = profile::compute_input_verdict(host);
  ASSERT_EQ(verdict.data_zones.size(), 2U);
  EXPECT_EQ(verdict.data_zones[0].site, 2);
  EXPECT_EQ(verdict.data_zones[1].site, 4);
}

}  // namespace
}  // namespace tscope
