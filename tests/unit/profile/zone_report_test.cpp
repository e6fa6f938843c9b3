// SPDX-License-Identifier: Apache-2.0
// The "Host zones" report section and the zones' JSON round trip, on a constructed HostRecord:
// a main thread running a loop of data loading and a graph function, and one exited loader.
#include <regex>

#include "support/test_util.h"
#include "tscope/profile/json_export.h"
#include "tscope/profile/report_text.h"

namespace tscope {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

profile::HostRecord training_loop_zones() {
  profile::HostRecord host;
  host.clock = "injected";
  host.sites = {
      {.name = "main loop",
       .function = "main",
       .file = "/src/train.cpp",
       .line = 10,
       .kind = "zone"},
      {.name = "train_step", .function = "train_step", .kind = "function"},
      {.name = "load_batch",
       .function = "load_batch",
       .file = "loader.cpp",
       .line = 20,
       .kind = "zone"},
      {.name = "voxelize",
       .function = "image_from_atoms",
       .file = "voxelize.cpp",
       .line = 84,
       .kind = "zone"},
      {.name = "atoms",
       .function = "image_from_atoms",
       .file = "voxelize.cpp",
       .line = 90,
       .kind = "value"},
  };
  profile::ZoneThreadRecord main_thread{.thread_index = 0, .os_thread_id = 100, .name = "main"};
  main_thread.nodes = {
      {.site = 0, .parent = -1, .call_count = 2, .total_ns = 10 * kSecond, .self_ns = kSecond / 2},
      {.site = 1, .parent = 0, .call_count = 2, .total_ns = 4 * kSecond, .self_ns = 4 * kSecond},
      {.site = 2,
       .parent = 0,
       .call_count = 2,
       .total_ns = 11 * kSecond / 2,
       .self_ns = kSecond / 2},
      {.site = 3, .parent = 2, .call_count = 64, .total_ns = 5 * kSecond, .self_ns = 5 * kSecond},
  };
  profile::ZoneThreadRecord loader{
      .thread_index = 1, .os_thread_id = 101, .name = "loader 1", .exited = true};
  loader.nodes = {
      {.site = 2, .parent = -1, .call_count = 3, .total_ns = 6 * kSecond, .self_ns = kSecond},
      {.site = 3, .parent = 0, .call_count = 96, .total_ns = 5 * kSecond, .self_ns = 5 * kSecond},
  };
  loader.values = {{.site = 4, .count = 96, .sum = 96000, .min = 500, .max = 1500}};
  host.threads = {main_thread, loader};
  return host;
}

TEST(ZoneReport, CProfileLayoutSortedByTottimeWithFooter) {
  profile::TextReportOptions options;
  options.n_zones = 3;
  options.n_zone_callers = 2;
  const std::string text = profile::render_zone_section(training_loop_zones(), options);
  const std::string expected = R"(Host zones
==========
  169 zone calls in 2 threads (1 exited); zone clock: injected
  Sorted by: tottime (all threads merged)

   ncalls  tottime  percall  cumtime  percall zone (file:line)
      160   10.000    0.062   10.000    0.062 voxelize (voxelize.cpp:84)
        2    4.000    2.000    4.000    2.000 train_step (graph function)
        5    1.500    0.300   11.500    2.300 load_batch (loader.cpp:20)
   ... 1 more rows (tottime 0.500s)

  Callers and callees of the top 2 zones (ncalls, tottime and cumtime of the call under that caller):
  voxelize (voxelize.cpp:84)
    called by:
          160   10.000   10.000  load_batch (loader.cpp:20)
  train_step (graph function)
    called by:
            2    4.000    4.000  main loop (train.cpp:10)

  Threads (top-level time: cumtime of the zones entered outside any other):
    thread   os tid   zone calls  top-level time  top zone by tottime       name
         0      100           70         10.000s  voxelize                  main
         1      101           99          6.000s  voxelize                  loader 1 (exited)

  Zone values:
        count         mean          min          max  value (file:line)
           96         1000          500         1500  atoms (voxelize.cpp:90)

)";
  EXPECT_EQ(text, expected);
}

TEST(ZoneReport, SortsByCumtimeAndListsCallees) {
  profile::TextReportOptions options;
  options.sort_zones_by_cumtime = true;
  options.n_zone_callers = 1;
  const std::string text = profile::render_zone_section(training_loop_zones(), options);
  EXPECT_NE(text.find("Sorted by: cumtime"), std::string::npos);
  // The first row is the zone with the largest cumtime, load_batch; its callees are listed.
  const std::regex first_row(R"(percall zone \(file:line\)\n +5 +1\.500 +0\.300 +11\.500 +2\.300 )"
                             R"(load_batch \(loader\.cpp:20\)\n)");
  EXPECT_TRUE(std::regex_search(text, first_row)) << text;
  EXPECT_NE(text.find("    calls:\n          160   10.000   10.000  voxelize (voxelize.cpp:84)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("<outside any zone>"), std::string::npos) << text;
  EXPECT_EQ(text.find("more rows"), std::string::npos) << text;
}

TEST(ZoneReport, FlagsSetRowsAndSortKey) {
  const profile::TextReportOptions report = profile::report_options(
      profile::parse_flags("profiling.n_zones=3,profiling.zone_sort=cumtime"));
  EXPECT_EQ(report.n_zones, 3);
  EXPECT_TRUE(report.sort_zones_by_cumtime);
  EXPECT_FALSE(profile::report_options(profile::parse_flags("")).sort_zones_by_cumtime);
  try {
    (void)profile::parse_flags("profiling.zone_sort=ncalls");
    ADD_FAILURE() << "expected Error(BadFlag)";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::BadFlag);
  }
}

TEST(ZoneReport, GraphCallsAloneAreNotProgramZones) {
  profile::HostRecord host = training_loop_zones();
  EXPECT_TRUE(host.has_program_zones());
  host.sites = {{.name = "train_step", .kind = "function"}};
  EXPECT_FALSE(host.has_program_zones());
}

TEST(ZoneReport, EmptyHostPrintsNothing) {
  EXPECT_EQ(profile::render_zone_section(profile::HostRecord{}, {}), "");
}

TEST(ZoneReport, ZonesOnlyProfilePrintsTheZoneSectionAlone) {
  profile::Profile zones_only;
  zones_only.title = "Host zones";
  zones_only.host = training_loop_zones();
  const std::string text = profile::render_text(zones_only, {});
  EXPECT_TRUE(text.starts_with("Host zones\n==========\n")) << text;
  EXPECT_EQ(text.find("Function profiling"), std::string::npos);
}

TEST(ZoneReport, SeveralProfilesPrintTheZonesOnceInTheSum) {
  profile::Profile first;
  first.functions.push_back({.name = "f", .call_count = 1, .call_ns = 10});
  first.host = training_loop_zones();
  profile::Profile second;
  second.functions.push_back({.name = "g", .call_count = 1, .call_ns = 5});
  const std::string text = profile::render_profiles({first, second}, {});
  const std::size_t at = text.find("Host zones\n==========");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(text.find("Host zones\n==========", at + 1), std::string::npos);
  EXPECT_GT(at, text.find("Sum of all(2)"));
}

TEST(ZoneReport, JsonRoundTripKeepsZonesAndRendersTheSame) {
  profile::Profile original;
  original.title = "Host zones";
  original.host = training_loop_zones();
  original.host.zone_overhead_ns = 6.5;
  profile::TextReportOptions options;
  options.n_zones = 2;
  options.sort_zones_by_cumtime = true;
  const std::string json = profile::to_json_text({original}, options);
  const profile::ProfileDocument document = profile::parse_profile_json(json, "zones.json");
  ASSERT_EQ(document.profiles.size(), 1U);
  const profile::HostRecord& host = document.profiles[0].host;
  ASSERT_EQ(host.sites.size(), original.host.sites.size());
  EXPECT_EQ(host.sites[3].name, "voxelize");
  EXPECT_EQ(host.sites[3].line, 84);
  ASSERT_EQ(host.threads.size(), 2U);
  EXPECT_TRUE(host.threads[1].exited);
  EXPECT_EQ(host.threads[1].nodes[1].call_count, 96);
  EXPECT_EQ(host.threads[1].values[0].max, 1500);
  EXPECT_EQ(host.zone_overhead_ns, 6.5);
  EXPECT_EQ(document.report.n_zones, 2);
  EXPECT_TRUE(document.report.sort_zones_by_cumtime);
  EXPECT_EQ(profile::render_profiles(document.profiles, document.report),
            profile::render_profiles({original}, options));
}

}  // namespace
}  // namespace tscope
