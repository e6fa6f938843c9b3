// SPDX-License-Identifier: Apache-2.0
// Host zones (zones.h): recording from several threads, nesting, thread exit, the off path, and
// graph functions nested under the zone that calls them. Times come from an injected clock that
// advances 10 ns per read on each thread, so every figure is exact.
#include "tscope/profile/zones.h"

#include <thread>
#include <vector>

#include "support/test_util.h"
#include "tscope/profile/zone_recorder.h"
#include "zone_test_clock.h"

namespace zones_header_only {
int run(int count);
}
namespace zones_compiled_out {
int run(int count, int& value_evaluations);
}

namespace tscope {
namespace {

using zone_test::kTickNs;

class Zones : public zone_test::InjectedClockTest {};

const profile::ZoneTotals& totals_of(const profile::HostRecord& host,
                                     const std::vector<profile::ZoneTotals>& totals,
                                     const std::string& name) {
  for (const profile::ZoneTotals& row : totals) {
    if (host.sites[static_cast<std::size_t>(row.site)].name == name) return row;
  }
  ADD_FAILURE() << "no zone named " << name;
  static const profile::ZoneTotals& none = *new profile::ZoneTotals();
  return none;
}

void inner() { TSCOPE_ZONE("inner"); }

void outer() {
  TSCOPE_ZONE("outer");
  inner();
  inner();
}

TEST_F(Zones, FourThreadsAddUpExactly) {
  // 1000 iterations write 6000 records per thread: more than one 4096-record chunk, so folding
  // a full chunk into the tree is exercised too.
  constexpr int kThreads = 4;
  constexpr int kIterations = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < kIterations; ++i) outer();
    });
  }
  for (std::thread& thread : threads) thread.join();

  const profile::HostRecord host = profile::snapshot_host_zones();
  EXPECT_EQ(host.clock, "injected");
  ASSERT_EQ(host.threads.size(), static_cast<std::size_t>(kThreads));
  for (const profile::ZoneThreadRecord& thread : host.threads) {
    EXPECT_TRUE(thread.exited);
    const std::vector<profile::ZoneTotals> totals = profile::zone_totals(thread);
    EXPECT_EQ(totals_of(host, totals, "outer").call_count, kIterations);
    EXPECT_EQ(totals_of(host, totals, "inner").call_count, 2 * kIterations);
  }
  const profile::ZoneThreadRecord merged = profile::merge_zone_threads(host);
  const std::vector<profile::ZoneTotals> totals = profile::zone_totals(merged);
  const profile::ZoneTotals& outer_totals = totals_of(host, totals, "outer");
  const profile::ZoneTotals& inner_totals = totals_of(host, totals, "inner");
  // Per outer call: six clock reads 10 ns apart; each inner spans one step, outer five.
  EXPECT_EQ(outer_totals.call_count, kThreads * kIterations);
  EXPECT_EQ(inner_totals.call_count, 2 * kThreads * kIterations);
  EXPECT_EQ(inner_totals.self_ns, 2 * kThreads * kIterations * kTickNs);
  EXPECT_EQ(inner_totals.cumulative_ns, inner_totals.self_ns);
  EXPECT_EQ(outer_totals.cumulative_ns, kThreads * kIterations * 5 * kTickNs);
  EXPECT_EQ(outer_totals.self_ns, kThreads * kIterations * 3 * kTickNs);
  ASSERT_EQ(merged.nodes.size(), 2U);  // outer (a root) and outer -> inner
  EXPECT_EQ(merged.nodes[0].parent, -1);
  EXPECT_EQ(merged.nodes[1].parent, 0);
}

int recurse(int depth) {
  TSCOPE_FUNCTION();
  return depth == 0 ? 0 : 1 + recurse(depth - 1);
}

TEST_F(Zones, RecursionCountsCumulativeTimeOnce) {
  EXPECT_EQ(recurse(2), 2);  // reads: enter 10, 20, 30; exit 40, 50, 60
  const profile::HostRecord host = profile::snapshot_host_zones();
  ASSERT_EQ(host.threads.size(), 1U);
  EXPECT_FALSE(host.threads[0].exited);
  const std::vector<profile::ZoneTotals> totals = profile::zone_totals(host.threads[0]);
  const profile::ZoneTotals& row = totals_of(host, totals, "recurse");
  EXPECT_EQ(row.call_count, 3);
  EXPECT_EQ(row.cumulative_ns, 5 * kTickNs);    // the outermost call only, as cProfile counts
  EXPECT_EQ(row.self_ns, 5 * kTickNs);          // self times 10 + 20 + 20 ns, depth 0 to 2
  EXPECT_EQ(host.threads[0].nodes.size(), 3U);  // one node per depth in the call tree
  EXPECT_EQ(host.sites[static_cast<std::size_t>(row.site)].function, "recurse");
}

TEST_F(Zones, OpenZoneIsNotCountedButItsFinishedChildrenAre) {
  TSCOPE_ZONE("still open");
  inner();
  const profile::HostRecord host = profile::snapshot_host_zones();
  ASSERT_EQ(host.threads.size(), 1U);
  const std::vector<profile::ZoneTotals> totals = profile::zone_totals(host.threads[0]);
  ASSERT_EQ(totals.size(), 1U);
  EXPECT_EQ(host.sites[static_cast<std::size_t>(totals[0].site)].name, "inner");
  EXPECT_EQ(host.threads[0].nodes.size(), 2U);
  EXPECT_EQ(host.threads[0].nodes[1].parent, 0);
}

TEST_F(Zones, ExitedThreadKeepsItsDataAndName) {
  std::thread([] {
    profile::set_zone_thread_name("loader 0");
    outer();
  }).join();
  const profile::HostRecord host = profile::snapshot_host_zones();
  ASSERT_EQ(host.threads.size(), 1U);
  EXPECT_TRUE(host.threads[0].exited);
  EXPECT_EQ(host.threads[0].name, "loader 0");
  EXPECT_GT(host.threads[0].os_thread_id, 0);
  EXPECT_EQ(profile::zone_totals(host.threads[0]).size(), 2U);
}

TEST_F(Zones, NamingAThreadThatNeverRecordsListsNothing) {
  std::thread([] { profile::set_zone_thread_name("idle loader"); }).join();
  EXPECT_TRUE(profile::snapshot_host_zones().empty());
}

TEST_F(Zones, SnapshotReadsALiveThreadWhileItRecords) {
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> done{0};
  std::thread worker([&] {
    while (!stop.load()) {
      outer();
      done.fetch_add(1);
    }
  });
  while (done.load() < 3000) std::this_thread::yield();
  std::int64_t previous = 0;
  for (int i = 0; i < 20; ++i) {
    const profile::HostRecord host = profile::snapshot_host_zones();
    ASSERT_EQ(host.threads.size(), 1U);
    const std::int64_t calls =
        totals_of(host, profile::zone_totals(host.threads[0]), "outer").call_count;
    EXPECT_GE(calls, previous);
    previous = calls;
  }
  stop.store(true);
  worker.join();
  const profile::HostRecord host = profile::snapshot_host_zones();
  EXPECT_EQ(totals_of(host, profile::zone_totals(host.threads[0]), "outer").call_count,
            done.load());
}

TEST_F(Zones, OffPathRecordsNothing) {
  profile::set_zones_enabled(false);
  EXPECT_FALSE(profile::zones_enabled());
  for (int i = 0; i < 100; ++i) outer();
  EXPECT_EQ(zones_header_only::run(10), 55);
  EXPECT_TRUE(profile::snapshot_host_zones().empty());
  EXPECT_EQ(profile::host_zone_record_count(), 0);
}

TEST_F(Zones, CompiledOutMacrosRecordNothingAndSkipTheirArguments) {
  int value_evaluations = 0;
  EXPECT_EQ(zones_compiled_out::run(10, value_evaluations), 45);
  EXPECT_EQ(value_evaluations, 0);
  EXPECT_TRUE(profile::snapshot_host_zones().empty());
}

TEST_F(Zones, ZoneEnteredBeforeSwitchingOffIsStillClosed) {
  {
    TSCOPE_ZONE("switched off inside");
    profile::set_zones_enabled(false);
  }
  const profile::HostRecord host = profile::snapshot_host_zones();
  ASSERT_EQ(host.threads.size(), 1U);
  EXPECT_EQ(profile::zone_totals(host.threads[0]).at(0).call_count, 1);
}

TEST_F(Zones, HeaderOnlyTranslationUnitRecordsZonesAndValues) {
  EXPECT_EQ(zones_header_only::run(4), 10);
  const profile::HostRecord host = profile::snapshot_host_zones();
  ASSERT_EQ(host.threads.size(), 1U);
  const std::vector<profile::ZoneTotals> totals = profile::zone_totals(host.threads[0]);
  EXPECT_EQ(totals_of(host, totals, "header only loop").call_count, 4);
  EXPECT_EQ(totals_of(host, totals, "leaf").call_count, 4);
  ASSERT_EQ(host.threads[0].values.size(), 1U);
  const profile::ZoneValueRecord& value = host.threads[0].values[0];
  EXPECT_EQ(host.sites[static_cast<std::size_t>(value.site)].kind, "value");
  EXPECT_EQ(value.count, 4);
  EXPECT_EQ(value.sum, 6.0);
  EXPECT_EQ(value.min, 0.0);
  EXPECT_EQ(value.max, 3.0);
}

TEST_F(Zones, GraphFunctionCallsNestUnderTheCallingZone) {
  Variable x = vector(DType::Float32, "x");
  FunctionOptions options;
  options.name = "train_step";
  Function step = function({x}, {x * 2.0}, {}, options);
  const std::vector<Tensor> inputs = {Tensor::zeros(DType::Float32, {3})};
  for (int i = 0; i < 3; ++i) {
    TSCOPE_ZONE("epoch loop");
    step(inputs);
  }
  const profile::HostRecord host = profile::snapshot_host_zones();
  ASSERT_EQ(host.threads.size(), 1U);
  const profile::ZoneThreadRecord& thread = host.threads[0];
  ASSERT_EQ(thread.nodes.size(), 2U);
  const profile::ZoneSiteRecord& child = host.sites[static_cast<std::size_t>(thread.nodes[1].site)];
  EXPECT_EQ(child.name, "train_step");
  EXPECT_EQ(child.kind, "function");
  EXPECT_EQ(thread.nodes[1].parent, 0);
  EXPECT_EQ(thread.nodes[1].call_count, 3);
}

}  // namespace
}  // namespace tscope
