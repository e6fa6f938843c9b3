// SPDX-License-Identifier: Apache-2.0
// merge_repeated_runs: repeated runs of one job as one profile for `tscope diff`, and why: a run
// that was slow throughout fails the gate one against one, and no longer decides over three runs.
#include "tscope/profile/repeated_runs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tscope/core/error.h"
#include "tscope/profile/profile_diff.h"

namespace tscope {
namespace {
using profile::FunctionRecord;
using profile::NodeRecord;
using profile::Profile;

// One run of a two-node job: `calls` calls of each node at `fastest_ns` to `slowest_ns`, the mean
// halfway.
Profile run(std::int64_t conv_fastest_ns, std::int64_t relu_fastest_ns, std::int64_t calls = 10) {
  Profile profile;
  FunctionRecord function;
  function.name = "train";
  function.call_count = calls;
  for (const auto& [name, fastest] :
       {std::pair<std::string, std::int64_t>{"Conv(x, w)", conv_fastest_ns},
        std::pair<std::string, std::int64_t>{"Relu(Conv.0)", relu_fastest_ns}}) {
    NodeRecord node;
    node.topo_index = static_cast<std::int64_t>(function.nodes.size());
    node.apply_name = name;
    node.op_name = name.substr(0, name.find('('));
    node.class_name = node.op_name;
    node.impl = "cpu";
    node.call_count = calls;
    node.min_ns = fastest;
    node.max_ns = fastest * 2;
    node.total_ns = calls * fastest * 3 / 2;
    function.call_ns += node.total_ns;
    function.vm_ns += node.total_ns;
    function.nodes.push_back(node);
  }
  function.measured_peak_bytes = 1000 + conv_fastest_ns;
  profile.functions.push_back(function);
  return profile;
}

TEST(RepeatedRuns, CallsAndTimesAddTheFastestAndSlowestCallsAreTheExtremes) {
  const Profile merged = profile::merge_repeated_runs({run(1000, 100), run(800, 120), run(900, 90)},
                                                      {"a.json", "b.json", "c.json"}, "3 runs");
  ASSERT_EQ(merged.functions.size(), 1U);
  const FunctionRecord& function = merged.functions[0];
  EXPECT_EQ(merged.title, "3 runs");
  EXPECT_EQ(function.call_count, 30);
  EXPECT_EQ(function.measured_peak_bytes, 2000);
  const NodeRecord& conv = function.nodes[0];
  EXPECT_EQ(conv.call_count, 30);
  EXPECT_EQ(conv.total_ns, 15'000 + 12'000 + 13'500);
  EXPECT_EQ(conv.min_ns, 800);
  EXPECT_EQ(conv.max_ns, 2000);
  EXPECT_EQ(function.nodes[1].min_ns, 90);
  EXPECT_EQ(function.nodes[1].max_ns, 240);
}

TEST(RepeatedRuns, RunsOfAnotherGraphAreRefusedByName) {
  Profile other = run(1000, 100);
  other.functions[0].nodes.pop_back();
  try {
    (void)profile::merge_repeated_runs({run(1000, 100), other}, {"a.json", "b.json"}, "runs");
    ADD_FAILURE() << "merged runs of different graphs";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(
        std::string(error.what()).find("b.json: function 'train' has 1 nodes where a.json has 2"),
        std::string::npos)
        << error.what();
  }
  Profile renamed = run(1000, 100);
  renamed.functions[0].nodes[1].apply_name = "Sigmoid(Conv.0)";
  try {
    (void)profile::merge_repeated_runs({run(1000, 100), renamed}, {"a.json", "b.json"}, "runs");
    ADD_FAILURE() << "merged runs of different graphs";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what())
                  .find("node 1 is 'Sigmoid(Conv.0)' where a.json has "
                        "'Relu(Conv.0)'"),
              std::string::npos)
        << error.what();
  }
  EXPECT_THROW((void)profile::merge_repeated_runs({}, {}, "none"), Error);
}

TEST(RepeatedRuns, ARunSlowThroughoutNoLongerDecidesTheGate) {
  // One "after" run had its Relu slow for its whole life (every call 30% slower, its fastest
  // too): one against one, that is a slowdown the gate cannot tell from a regression.
  const Profile slow_run = run(1000, 130);
  const profile::ProfileDiff one = profile::diff_profiles(run(1000, 100), slow_run);
  EXPECT_TRUE(one.gate_failed);
  // Over three runs a side, each node's fastest call is its fastest in any run.
  const Profile before = profile::merge_repeated_runs(
      {run(1000, 100), run(1010, 104), run(990, 102)}, {"b1", "b2", "b3"}, "before");
  const Profile after = profile::merge_repeated_runs({slow_run, run(1005, 101), run(1000, 103)},
                                                     {"a1", "a2", "a3"}, "after");
  const profile::ProfileDiff three = profile::diff_profiles(before, after);
  EXPECT_FALSE(three.gate_failed);
  // A real regression is in every run, and still fails it.
  const Profile regressed = profile::merge_repeated_runs(
      {run(1000, 200), run(1000, 210), run(1000, 205)}, {"r1", "r2", "r3"}, "regressed");
  EXPECT_TRUE(profile::diff_profiles(before, regressed).gate_failed);
}

// Each run's first call is cold (here 50 times its fastest). Merged, the other runs' first calls
// must not count as warm calls: they would widen the spread before and let a regression of every
// warm call pass as noise.
Profile run_with_cold_call(std::int64_t conv_fastest_ns) {
  Profile profile = run(conv_fastest_ns, 100);
  for (NodeRecord& node : profile.functions[0].nodes) {
    node.total_ns += 48 * node.min_ns;
    node.max_ns = 50 * node.min_ns;
  }
  return profile;
}

TEST(RepeatedRuns, EachRunsSlowestCallStaysOutOfTheWarmMean) {
  const Profile before = profile::merge_repeated_runs(
      {run_with_cold_call(1000), run_with_cold_call(1000), run_with_cold_call(1000)},
      {"b1", "b2", "b3"}, "before");
  const NodeRecord& conv = before.functions[0].nodes[0];
  EXPECT_EQ(conv.run_count, 3);
  EXPECT_EQ(conv.run_slowest_ns, 3 * 50'000);
  EXPECT_EQ(conv.max_ns, 50'000);
  // Every warm call 25% slower in every run.
  const Profile after = profile::merge_repeated_runs(
      {run_with_cold_call(1250), run_with_cold_call(1250), run_with_cold_call(1250)},
      {"a1", "a2", "a3"}, "after");
  const profile::ProfileDiff diff = profile::diff_profiles(before, after);
  const profile::DiffRow& row = diff.nodes.matched[0];
  ASSERT_EQ(row.name, "Conv(x, w)");
  // The warm mean of one run: 13 fastest calls' worth over its 9 warm calls.
  EXPECT_EQ(row.before.warm_call_count, 27);
  EXPECT_DOUBLE_EQ(row.before.warm_ns_per_call(), 13'000.0 / 9.0);
  EXPECT_TRUE(row.slower);
  EXPECT_TRUE(diff.gate_failed);
  // Merging the merged side again keeps the count of runs.
  const Profile twice = profile::merge_repeated_runs({before, run_with_cold_call(1000)},
                                                     {"before", "b4"}, "four runs");
  EXPECT_EQ(twice.functions[0].nodes[0].run_count, 4);
  EXPECT_EQ(twice.functions[0].nodes[0].run_slowest_ns, 4 * 50'000);
}

}  // namespace
}  // namespace tscope
