// SPDX-License-Identifier: Apache-2.0
// diff_profiles and its renderers over profiles built in code: matching, appeared and vanished
// rows, functions in one profile, implementation changes, sort order, the fastest-call rule and
// the gate decision.
#include <nlohmann/json.hpp>

#include "support/test_util.h"
#include "tscope/profile/profile_diff.h"
#include "tscope/profile/report_diff.h"

namespace tscope {
namespace {

using profile::DiffRow;
using profile::DiffTable;
using profile::NodeRecord;
using profile::Profile;

struct NodeSpec {
  std::string apply_name;
  std::int64_t total_ns = 0;
  std::int64_t call_count = 10;
  std::int64_t min_ns = 0;  // 0: every call took total / calls (a spread of 0)
  std::int64_t max_ns = 0;
  std::string impl = "cpu";
  std::string op_name;     // empty: the apply name up to its '('
  std::string class_name;  // empty: the op name up to its '{'
  std::string user_op;
};

NodeRecord make_node(const NodeSpec& spec, std::int64_t topo_index) {
  NodeRecord node;
  node.topo_index = topo_index;
  node.apply_name = spec.apply_name;
  node.op_name =
      spec.op_name.empty() ? spec.apply_name.substr(0, spec.apply_name.find('(')) : spec.op_name;
  node.class_name =
      spec.class_name.empty() ? node.op_name.substr(0, node.op_name.find('{')) : spec.class_name;
  node.impl = spec.impl;
  node.call_count = spec.call_count;
  node.total_ns = spec.total_ns;
  const std::int64_t mean_ns = spec.call_count > 0 ? spec.total_ns / spec.call_count : 0;
  node.min_ns = spec.min_ns > 0 ? spec.min_ns : mean_ns;
  node.max_ns = spec.max_ns > 0 ? spec.max_ns : mean_ns;
  node.user_op = spec.user_op;
  return node;
}

Profile make_profile(const std::vector<NodeSpec>& nodes,
                     const std::string& function_name = "train",
                     std::int64_t call_count = 10) {
  Profile profile;
  profile::FunctionRecord function;
  function.name = function_name;
  function.call_count = call_count;
  for (const NodeSpec& spec : nodes) {
    function.nodes.push_back(make_node(spec, static_cast<std::int64_t>(function.nodes.size())));
    function.call_ns += spec.total_ns;
    function.vm_ns += spec.total_ns;
  }
  profile.functions.push_back(std::move(function));
  return profile;
}

const DiffRow* find_row(const std::vector<DiffRow>& rows, const std::string& name) {
  for (const DiffRow& row : rows) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

TEST(ProfileDiff, MatchesRowsByNameAndSortsByAbsoluteChange) {
  const Profile before = make_profile({{.apply_name = "Exp(x)", .total_ns = 100'000},
                                       {.apply_name = "Dot(x, w)", .total_ns = 200'000},
                                       {.apply_name = "Log(y)", .total_ns = 300'000}});
  // Listed in another order: rows match by name, not by position.
  const Profile after = make_profile({{.apply_name = "Log(y)", .total_ns = 310'000},
                                      {.apply_name = "Exp(x)", .total_ns = 400'000},
                                      {.apply_name = "Dot(x, w)", .total_ns = 150'000}});
  const profile::ProfileDiff diff = profile::diff_profiles(before, after);
  ASSERT_EQ(diff.nodes.matched.size(), 3u);
  EXPECT_TRUE(diff.nodes.appeared.empty());
  EXPECT_TRUE(diff.nodes.vanished.empty());
  EXPECT_EQ(diff.nodes.matched[0].name, "Exp(x)");
  EXPECT_EQ(diff.nodes.matched[0].change_ns, 300'000);
  EXPECT_DOUBLE_EQ(diff.nodes.matched[0].ratio, 4.0);
  EXPECT_EQ(diff.nodes.matched[1].name, "Dot(x, w)");
  EXPECT_EQ(diff.nodes.matched[1].change_ns, -50'000);
  EXPECT_EQ(diff.nodes.matched[2].name, "Log(y)");
  ASSERT_EQ(diff.ops.matched.size(), 3u);
  EXPECT_EQ(diff.ops.matched[0].name, "Exp");
  ASSERT_EQ(diff.functions.size(), 1u);
  EXPECT_EQ(diff.functions[0].name, "train");
  EXPECT_EQ(diff.total.before.total_ns, 600'000);
  EXPECT_EQ(diff.total.after.total_ns, 860'000);
}

TEST(ProfileDiff, ListsAppearedAndVanishedRowsApart) {
  // A rewrite fused Sub and Sqr into one Composite: two rows vanish, one appears.
  const Profile before = make_profile({{.apply_name = "Elemwise{sub}(a, b)", .total_ns = 50'000},
                                       {.apply_name = "Elemwise{sqr}(d)", .total_ns = 40'000},
                                       {.apply_name = "Dot(x, w)", .total_ns = 100'000}});
  const Profile after =
      make_profile({{.apply_name = "Elemwise{Composite{sqr((i0 - i1))}}(a, b)", .total_ns = 60'000},
                    {.apply_name = "Dot(x, w)", .total_ns = 100'000}});
  const profile::ProfileDiff diff = profile::diff_profiles(before, after);
  ASSERT_EQ(diff.nodes.vanished.size(), 2u);
  EXPECT_EQ(diff.nodes.vanished[0].name, "Elemwise{sub}(a, b)");  // the larger first
  EXPECT_EQ(diff.nodes.vanished[1].name, "Elemwise{sqr}(d)");
  EXPECT_FALSE(diff.nodes.vanished[0].after.present);
  EXPECT_LT(diff.nodes.vanished[0].ratio, 0);
  ASSERT_EQ(diff.nodes.appeared.size(), 1u);
  EXPECT_EQ(diff.nodes.appeared[0].name, "Elemwise{Composite{sqr((i0 - i1))}}(a, b)");
  EXPECT_FALSE(diff.nodes.appeared[0].before.present);
  ASSERT_EQ(diff.nodes.matched.size(), 1u);
  EXPECT_EQ(diff.nodes.matched[0].name, "Dot(x, w)");
  // The Class row "Elemwise" stays: its nodes changed, the class did not.
  ASSERT_NE(find_row(diff.classes.matched, "Elemwise"), nullptr);
  EXPECT_EQ(diff.ops.vanished.size(), 2u);
  EXPECT_EQ(diff.ops.appeared.size(), 1u);
  const std::string text = profile::render_diff_text(diff);
  EXPECT_NE(text.find("Apply rows that appeared (only in after): 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Apply rows that vanished (only in before): 2\n"), std::string::npos) << text;
}

TEST(ProfileDiff, FlagsImplementationChanges) {
  const Profile before =
      make_profile({{.apply_name = "Gemm(x, w, b)", .total_ns = 100'000, .impl = "blas"}});
  const Profile after =
      make_profile({{.apply_name = "Gemm(x, w, b)", .total_ns = 100'000, .impl = "dnnl"}});
  const profile::ProfileDiff diff = profile::diff_profiles(before, after);
  ASSERT_EQ(diff.nodes.matched.size(), 1u);
  EXPECT_TRUE(diff.nodes.matched[0].impl_changed);
  EXPECT_EQ(diff.nodes.matched[0].before.impl, "blas");
  EXPECT_EQ(diff.nodes.matched[0].after.impl, "dnnl");
  EXPECT_TRUE(diff.classes.matched[0].impl_changed);
  const std::string text = profile::render_diff_text(diff);
  EXPECT_NE(text.find(" blas->dnnl impl "), std::string::npos) << text;
}

TEST(ProfileDiff, SameImplementationIsNoChange) {
  const Profile before = make_profile({{.apply_name = "Gemm(x, w, b)", .total_ns = 100'000}});
  const profile::ProfileDiff diff = profile::diff_profiles(before, before);
  EXPECT_FALSE(diff.nodes.matched[0].impl_changed);
  EXPECT_FALSE(diff.gate_failed);
}

TEST(ProfileDiff, MeanAndFastestCallSlowerFailsTheGate) {
  const Profile before = make_profile(
      {{.apply_name = "Conv(x, w)", .total_ns = 1'000'000, .min_ns = 95'000, .max_ns = 105'000}});
  const Profile after = make_profile(
      {{.apply_name = "Conv(x, w)", .total_ns = 1'500'000, .min_ns = 145'000, .max_ns = 155'000}});
  const profile::ProfileDiff diff = profile::diff_profiles(before, after);
  const DiffRow& row = diff.nodes.matched[0];
  EXPECT_DOUBLE_EQ(row.ratio, 1.5);
  EXPECT_DOUBLE_EQ(row.fastest_ratio, 145.0 / 95.0);
  EXPECT_FALSE(row.noise);
  EXPECT_TRUE(row.slower);
  EXPECT_TRUE(diff.total.slower);
  EXPECT_TRUE(diff.gate_failed);
  const std::string text = profile::render_diff_text(diff);
  EXPECT_NE(text.find("   1.50x     1.53x  100.0%        10        cpu slower       Conv(x, w)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  Result: slower by more than 10.0%\n"), std::string::npos) << text;
}

TEST(ProfileDiff, MeanSlowerButFastestCallNotIsNoise) {
  // 10 calls of 100 us on average, the fastest 90 us.
  const Profile before = make_profile(
      {{.apply_name = "Conv(x, w)", .total_ns = 1'000'000, .min_ns = 90'000, .max_ns = 300'000}});
  // 50% slower on average, but the fastest call is 2% slower: a cold call or a spike.
  const Profile after = make_profile(
      {{.apply_name = "Conv(x, w)", .total_ns = 1'500'000, .min_ns = 92'000, .max_ns = 600'000}});
  const profile::ProfileDiff diff = profile::diff_profiles(before, after);
  const DiffRow& row = diff.nodes.matched[0];
  EXPECT_DOUBLE_EQ(row.ratio, 1.5);
  EXPECT_TRUE(row.noise);
  EXPECT_FALSE(row.slower);
  EXPECT_TRUE(diff.total.noise);
  EXPECT_FALSE(diff.total.slower);
  EXPECT_FALSE(diff.gate_failed);
  const std::string text = profile::render_diff_text(diff);
  EXPECT_NE(text.find(" noise "), std::string::npos) << text;
  EXPECT_NE(text.find("(+50.0%), within noise\n"), std::string::npos) << text;
}

TEST(ProfileDiff, FastestCallInsideTheSpreadBeforeIsNoise) {
  // 10 calls: a cold one of 300 us, nine warm ones averaging 700/9 = 77.8 us, the fastest 50 us.
  // Half that spread: the fastest call must grow by more than 0.5 x (77.8 / 50 - 1) = 27.8%.
  const Profile before = make_profile(
      {{.apply_name = "Pool(x)", .total_ns = 1'000'000, .min_ns = 50'000, .max_ns = 300'000}});
  const double limit = 1.0 + 0.5 * ((700'000.0 / 9.0) / 50'000.0 - 1.0);
  const auto after_with_fastest = [](std::int64_t min_ns) {
    return make_profile(
        {{.apply_name = "Pool(x)", .total_ns = 1'300'000, .min_ns = min_ns, .max_ns = 390'000}});
  };
  // The fastest call 20% up, past the 10% threshold but inside the spread: noise.
  const profile::ProfileDiff inside = profile::diff_profiles(before, after_with_fastest(60'000));
  const DiffRow& scattered = inside.nodes.matched[0];
  EXPECT_EQ(scattered.before.warm_ns, 700'000);
  EXPECT_EQ(scattered.before.warm_call_count, 9);
  EXPECT_DOUBLE_EQ(scattered.fastest_limit, limit);
  EXPECT_TRUE(scattered.noise);
  EXPECT_FALSE(scattered.slower);
  EXPECT_FALSE(inside.gate_failed);
  // 30% up: past the spread too.
  const profile::ProfileDiff outside = profile::diff_profiles(before, after_with_fastest(65'000));
  EXPECT_FALSE(outside.nodes.matched[0].noise);
  EXPECT_TRUE(outside.nodes.matched[0].slower);
  EXPECT_TRUE(outside.gate_failed);
  // A steady row keeps the threshold as its limit.
  const Profile steady = make_profile(
      {{.apply_name = "Pool(x)", .total_ns = 1'000'000, .min_ns = 98'000, .max_ns = 104'000}});
  EXPECT_DOUBLE_EQ(profile::diff_profiles(steady, steady).nodes.matched[0].fastest_limit, 1.1);
  const nlohmann::json json = nlohmann::json::parse(profile::render_diff_json(inside));
  EXPECT_DOUBLE_EQ(json["nodes"]["matched"][0]["fastest_limit"].get<double>(), limit);
  EXPECT_EQ(json["nodes"]["matched"][0]["before"]["warm_ns"], 700'000);
  EXPECT_EQ(json["nodes"]["matched"][0]["before"]["warm_call_count"], 9);
}

TEST(ProfileDiff, FastestCallSlowerButMeanNotIsNoSlowdown) {
  const Profile before = make_profile(
      {{.apply_name = "Conv(x, w)", .total_ns = 1'000'000, .min_ns = 50'000, .max_ns = 300'000}});
  // The fastest call doubled, the mean grew 5%: under the threshold, nothing to flag.
  const Profile after = make_profile(
      {{.apply_name = "Conv(x, w)", .total_ns = 1'050'000, .min_ns = 100'000, .max_ns = 120'000}});
  const profile::ProfileDiff diff = profile::diff_profiles(before, after);
  const DiffRow& row = diff.nodes.matched[0];
  EXPECT_DOUBLE_EQ(row.fastest_ratio, 2.0);
  EXPECT_FALSE(row.noise);
  EXPECT_FALSE(row.slower);
  EXPECT_FALSE(diff.total.slower);
  EXPECT_FALSE(diff.gate_failed);
}

TEST(ProfileDiff, RowsWithoutADistributionFollowTheMean) {
  const auto without_distribution = [](std::int64_t total_ns) {
    Profile profile = make_profile({{.apply_name = "Conv(x, w)", .total_ns = total_ns}});
    profile.functions[0].nodes[0].min_ns = profile.functions[0].nodes[0].max_ns = 0;
    return profile;
  };
  const Profile before = without_distribution(1'000'000);
  const profile::ProfileDiff small =
      profile::diff_profiles(before, without_distribution(1'050'000));
  EXPECT_FALSE(small.nodes.matched[0].before.has_distribution);
  EXPECT_LT(small.nodes.matched[0].fastest_ratio, 0);
  EXPECT_FALSE(small.nodes.matched[0].noise);
  EXPECT_FALSE(small.nodes.matched[0].slower);  // 5% is under the default 10%
  const profile::ProfileDiff large =
      profile::diff_profiles(before, without_distribution(1'200'000));
  EXPECT_FALSE(large.nodes.matched[0].noise);
  EXPECT_TRUE(large.nodes.matched[0].slower);
  EXPECT_TRUE(large.total.slower);
  EXPECT_TRUE(large.gate_failed);
  // A distribution on one side only: the mean decides too.
  const Profile after = make_profile(
      {{.apply_name = "Conv(x, w)", .total_ns = 1'200'000, .min_ns = 1'000, .max_ns = 500'000}});
  const profile::ProfileDiff one_sided = profile::diff_profiles(before, after);
  EXPECT_FALSE(one_sided.nodes.matched[0].noise);
  EXPECT_TRUE(one_sided.nodes.matched[0].slower);
}

TEST(ProfileDiff, FastestTimeSumsEachNodesFastestCall) {
  // One Function call runs A once and B twice.
  const Profile before = make_profile(
      {{.apply_name = "Exp(a)", .total_ns = 1'000'000, .min_ns = 90'000, .max_ns = 110'000},
       {.apply_name = "Exp(b)",
        .total_ns = 500'000,
        .call_count = 20,
        .min_ns = 20'000,
        .max_ns = 30'000}});
  const profile::ProfileDiff diff = profile::diff_profiles(before, before);
  // The total: every node's calls at that node's fastest, per Function call.
  EXPECT_EQ(diff.total.before.fastest_ns, 10 * 90'000 + 20 * 20'000);
  EXPECT_DOUBLE_EQ(diff.total.before.fastest_ns_per_call(), 90'000 + 2 * 20'000);
  // A row of several nodes: the nodes' fastest calls averaged over their 30 calls.
  const DiffRow* exp = find_row(diff.ops.matched, "Exp");
  ASSERT_NE(exp, nullptr);
  EXPECT_EQ(exp->before.call_count, 30);
  EXPECT_DOUBLE_EQ(exp->before.fastest_ns_per_call(), (10 * 90'000 + 20 * 20'000) / 30.0);
}

TEST(ProfileDiff, ThresholdIsAPercentageOfTimePerCall) {
  const Profile before = make_profile({{.apply_name = "Conv(x, w)", .total_ns = 1'000'000}});
  const Profile after = make_profile({{.apply_name = "Conv(x, w)", .total_ns = 1'150'000}});
  EXPECT_FALSE(profile::diff_profiles(before, after, {.slower_percent = 20}).gate_failed);
  EXPECT_TRUE(profile::diff_profiles(before, after, {.slower_percent = 10}).gate_failed);
}

TEST(ProfileDiff, RatioComparesTimePerCall) {
  // Twice the calls for twice the time: no slower per call.
  const Profile before =
      make_profile({{.apply_name = "Conv(x, w)", .total_ns = 1'000'000, .call_count = 10}});
  const Profile after = make_profile(
      {{.apply_name = "Conv(x, w)", .total_ns = 2'000'000, .call_count = 20}}, "train", 20);
  const profile::ProfileDiff diff = profile::diff_profiles(before, after);
  EXPECT_EQ(diff.nodes.matched[0].change_ns, 1'000'000);
  EXPECT_DOUBLE_EQ(diff.nodes.matched[0].ratio, 1.0);
  EXPECT_FALSE(diff.gate_failed);
  EXPECT_NE(profile::render_diff_text(diff).find("10->20"), std::string::npos);
}

TEST(ProfileDiff, RowsBelowTheMinimumShareNeverFailTheGate) {
  // The small row doubles (0.5% of the total); the large one stays.
  const Profile before = make_profile({{.apply_name = "Conv(x, w)", .total_ns = 1'000'000},
                                       {.apply_name = "Exp(y)", .total_ns = 5'000}});
  const Profile after = make_profile({{.apply_name = "Conv(x, w)", .total_ns = 1'000'000},
                                      {.apply_name = "Exp(y)", .total_ns = 10'000}});
  const profile::ProfileDiff diff = profile::diff_profiles(before, after);
  const DiffRow* row = find_row(diff.nodes.matched, "Exp(y)");
  ASSERT_NE(row, nullptr);
  EXPECT_DOUBLE_EQ(row->ratio, 2.0);
  EXPECT_FALSE(row->slower);
  EXPECT_FALSE(diff.gate_failed);
  const profile::ProfileDiff strict =
      profile::diff_profiles(before, after, {.min_share_percent = 0.1});
  EXPECT_TRUE(find_row(strict.nodes.matched, "Exp(y)")->slower);
  EXPECT_TRUE(strict.gate_failed);
}

// A small row whose calls hit a spike in one run (page faults, a core taken away) holds a large
// share of that run's total; its share of the steady node time (fastest calls) stays small, and
// that is the share the gate reads when both profiles carry distributions.
TEST(ProfileDiff, TheMinimumShareIsOfTheSteadyNodeTime) {
  const Profile before = make_profile(
      {{.apply_name = "Conv(x, w)", .total_ns = 1'000'000, .min_ns = 100'000, .max_ns = 100'000},
       {.apply_name = "Relu(y)", .total_ns = 5'000, .min_ns = 500, .max_ns = 500}});
  // Relu: every call 4x slower on average (2% of the total), its fastest call 20% slower (0.6% of
  // the steady time).
  const Profile after = make_profile(
      {{.apply_name = "Conv(x, w)", .total_ns = 1'000'000, .min_ns = 100'000, .max_ns = 100'000},
       {.apply_name = "Relu(y)", .total_ns = 20'000, .min_ns = 600, .max_ns = 8'000}});
  const profile::ProfileDiff diff = profile::diff_profiles(before, after);
  const DiffRow* row = find_row(diff.nodes.matched, "Relu(y)");
  ASSERT_NE(row, nullptr);
  EXPECT_GT(row->after.share_percent, 1.0);
  EXPECT_NEAR(row->after.steady_share_percent, 100.0 * 6'000 / 1'006'000, 1e-9);
  EXPECT_NEAR(row->before.steady_share_percent, 100.0 * 5'000 / 1'005'000, 1e-9);
  EXPECT_FALSE(row->slower);
  EXPECT_FALSE(diff.gate_failed);
  // The same slowdown on a row holding enough of the steady time fails the gate.
  const profile::ProfileDiff strict =
      profile::diff_profiles(before, after, {.min_share_percent = 0.4});
  EXPECT_TRUE(find_row(strict.nodes.matched, "Relu(y)")->slower);
  EXPECT_TRUE(strict.gate_failed);
  // Without distributions (profiles written without max_ns) the total share is all there is.
  Profile before_plain = before;
  Profile after_plain = after;
  for (Profile* profile : {&before_plain, &after_plain}) {
    for (NodeRecord& node : profile->functions[0].nodes) node.max_ns = 0;
  }
  const profile::ProfileDiff plain = profile::diff_profiles(before_plain, after_plain);
  const DiffRow* plain_row = find_row(plain.nodes.matched, "Relu(y)");
  EXPECT_LT(plain_row->after.steady_share_percent, 0);
  EXPECT_TRUE(plain_row->slower);
}

TEST(ProfileDiff, SlowerTotalFailsTheGateAlone) {
  // Every row 20% slower, none large enough to count: the total decides.
  const Profile before = make_profile(
      {{.apply_name = "A(x)", .total_ns = 100'000}, {.apply_name = "B(x)", .total_ns = 100'000}});
  const Profile after = make_profile(
      {{.apply_name = "A(x)", .total_ns = 120'000}, {.apply_name = "B(x)", .total_ns = 120'000}});
  const profile::ProfileDiff diff =
      profile::diff_profiles(before, after, {.min_share_percent = 60});
  EXPECT_FALSE(diff.nodes.matched[0].slower);
  EXPECT_TRUE(diff.total.slower);
  EXPECT_TRUE(diff.gate_failed);
}

TEST(ProfileDiff, ApplyRowsMatchByProvenance) {
  // Two ONNX nodes print alike; the model node names tell them apart, whatever their order.
  const Profile before =
      make_profile({{.apply_name = "Relu(x)", .total_ns = 100'000, .user_op = "onnx:relu_1"},
                    {.apply_name = "Relu(x)", .total_ns = 300'000, .user_op = "onnx:relu_2"}});
  const Profile after =
      make_profile({{.apply_name = "Relu(x)", .total_ns = 300'000, .user_op = "onnx:relu_2"},
                    {.apply_name = "Relu(x)", .total_ns = 100'000, .user_op = "onnx:relu_1"}});
  const profile::ProfileDiff diff = profile::diff_profiles(before, after);
  ASSERT_EQ(diff.nodes.matched.size(), 2u);
  for (const DiffRow& row : diff.nodes.matched) EXPECT_EQ(row.change_ns, 0) << row.provenance;
  EXPECT_NE(profile::render_diff_text(diff).find("    <- onnx:relu_2\n"), std::string::npos);
}

TEST(ProfileDiff, NodesThatPrintAlikeMatchInOrder) {
  const Profile before = make_profile({{.apply_name = "Relu(x)", .total_ns = 100'000},
                                       {.apply_name = "Relu(x)", .total_ns = 300'000}});
  const Profile after = make_profile({{.apply_name = "Relu(x)", .total_ns = 100'000},
                                      {.apply_name = "Relu(x)", .total_ns = 300'000},
                                      {.apply_name = "Relu(x)", .total_ns = 5'000}});
  const profile::ProfileDiff diff = profile::diff_profiles(before, after);
  ASSERT_EQ(diff.nodes.matched.size(), 2u);
  for (const DiffRow& row : diff.nodes.matched) EXPECT_EQ(row.change_ns, 0);
  ASSERT_EQ(diff.nodes.appeared.size(), 1u);
  EXPECT_EQ(diff.nodes.appeared[0].after.total_ns, 5'000);
}

TEST(ProfileDiff, FunctionsInOneProfileOnlyAreListedApart) {
  Profile before = make_profile({{.apply_name = "Conv(x, w)", .total_ns = 1'000'000}});
  Profile after = before;
  // predict only before, evaluate only after, both far slower than train: left out of the rest.
  before.functions.push_back(
      make_profile({{.apply_name = "Conv(x, w)", .total_ns = 9'000'000}}, "predict", 3)
          .functions[0]);
  after.functions.push_back(
      make_profile({{.apply_name = "Softmax(y)", .total_ns = 7'000'000}}, "evaluate", 2)
          .functions[0]);
  const profile::ProfileDiff diff = profile::diff_profiles(before, after);
  ASSERT_EQ(diff.functions.size(), 1u);
  EXPECT_EQ(diff.functions[0].name, "train");
  ASSERT_EQ(diff.functions_vanished.size(), 1u);
  EXPECT_EQ(diff.functions_vanished[0].name, "predict");
  EXPECT_EQ(diff.functions_vanished[0].before.call_count, 3);
  EXPECT_FALSE(diff.functions_vanished[0].after.present);
  ASSERT_EQ(diff.functions_appeared.size(), 1u);
  EXPECT_EQ(diff.functions_appeared[0].name, "evaluate");
  EXPECT_EQ(diff.functions_appeared[0].after.total_ns, 7'000'000);
  EXPECT_EQ(diff.total.before.total_ns, 1'000'000);
  EXPECT_EQ(diff.total.after.total_ns, 1'000'000);
  EXPECT_EQ(diff.nodes.matched.size(), 1u);
  EXPECT_TRUE(diff.nodes.appeared.empty());
  EXPECT_TRUE(diff.nodes.vanished.empty());
  EXPECT_TRUE(diff.ops.appeared.empty());
  EXPECT_FALSE(diff.gate_failed);
  const std::string text = profile::render_diff_text(diff);
  EXPECT_NE(text.find("Functions that appeared (only in after): 1\n"
                      "   <#call>      <time>   <time/call> <Function name>\n"
                      "        2  7.000e-03s    3.500e-03s evaluate\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Functions that vanished (only in before): 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  Functions appeared: 1, vanished: 1 (not compared)\n"), std::string::npos)
      << text;
}

TEST(ProfileDiff, ProfilesWithoutACommonFunctionCompareNothing) {
  const Profile before = make_profile({{.apply_name = "A(x)", .total_ns = 1}}, "train");
  const Profile after = make_profile({{.apply_name = "A(x)", .total_ns = 100}}, "predict");
  const profile::ProfileDiff diff = profile::diff_profiles(before, after, {}, "a.json", "b.json");
  EXPECT_TRUE(diff.functions.empty());
  EXPECT_EQ(diff.functions_vanished.size(), 1u);
  EXPECT_EQ(diff.functions_appeared.size(), 1u);
  EXPECT_TRUE(diff.nodes.matched.empty());
  EXPECT_FALSE(diff.gate_failed);
  const std::string text = profile::render_diff_text(diff);
  EXPECT_NE(text.find("  No function is in both profiles: nothing was compared\n"),
            std::string::npos)
      << text;
}

TEST(ProfileDiff, ProfileWithoutFunctionsIsAnError) {
  const Profile before = make_profile({{.apply_name = "A(x)", .total_ns = 1}});
  const Error error = testing::error_of([&] { (void)profile::diff_profiles(before, Profile{}); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument) << error.what();
}

TEST(ProfileDiff, TimesThatOverflowAreAParseError) {
  Profile before = make_profile({{.apply_name = "A(x)", .total_ns = 1000}});
  before.functions[0].nodes[0].max_ns = INT64_MAX / 4;  // x 10 calls: beyond 64 bits
  const Error error = testing::error_of([&] { (void)profile::diff_profiles(before, before); });
  EXPECT_EQ(error.kind(), ErrorKind::Parse) << error.what();
}

TEST(ProfileDiff, ComparesMemoryPeaks) {
  Profile before = make_profile({{.apply_name = "A(x)", .total_ns = 1}});
  Profile after = make_profile({{.apply_name = "A(x)", .total_ns = 1}});
  before.functions[0].measured_peak_bytes = 4096;
  after.functions[0].measured_peak_bytes = 8192;
  after.functions[0].min_peak = {.searched = true, .exact = true, .peak_bytes = 2048};
  const profile::ProfileDiff diff = profile::diff_profiles(before, after);
  bool measured = false;
  bool min_peak = false;
  for (const profile::DiffPeak& peak : diff.peaks) {
    if (peak.name == "measured allocator peak") {
      measured = true;
      EXPECT_EQ(peak.before_bytes, 4096);
      EXPECT_EQ(peak.after_bytes, 8192);
    }
    if (peak.name == "minimum over node orders") {
      min_peak = true;
      EXPECT_EQ(peak.before_bytes, -1);  // not searched before
      EXPECT_EQ(peak.after_bytes, 2048);
    }
  }
  EXPECT_TRUE(measured);
  EXPECT_TRUE(min_peak);
  const std::string text = profile::render_diff_text(diff);
  EXPECT_NE(text.find("       4KB        8KB       +4KB   2.00x measured allocator peak\n"),
            std::string::npos)
      << text;
}

TEST(ReportDiff, TextHasEverySection) {
  const Profile before = make_profile({{.apply_name = "Exp(x)", .total_ns = 100'000}});
  const Profile after = make_profile({{.apply_name = "Exp(x)", .total_ns = 100'000}});
  const std::string text =
      profile::render_diff_text(profile::diff_profiles(before, after, {}, "a.json", "b.json"));
  for (const char* section :
       {"Profile comparison\n==================\n  Before: a.json\n  After: b.json\n",
        "Function\n--------\n", "Memory peaks (the max over functions)\n---\n", "Class\n-----\n",
        "Ops\n---\n", "Apply\n-----\n", "Class rows that appeared (only in after): 0\n",
        "Ops rows that vanished (only in before): 0\n", "Verdict\n-------\n",
        "  Result: not slower by more than 10.0%\n"}) {
    EXPECT_NE(text.find(section), std::string::npos) << section << "\n---\n" << text;
  }
}

TEST(ReportDiff, TruncatedTablesCountTheRest) {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 5; ++i) {
    nodes.push_back({.apply_name = "Exp(x" + std::to_string(i) + ")", .total_ns = 1000});
  }
  const std::string text = profile::render_diff_text(
      profile::diff_profiles(make_profile(nodes), make_profile(nodes)), {.n_rows = 2});
  EXPECT_NE(text.find("   ... (remaining 3 rows change the time by +0.000e+00s; 0 of them slower)"),
            std::string::npos)
      << text;
}

TEST(ReportDiff, JsonHoldsEveryRow) {
  const Profile before = make_profile({{.apply_name = "Exp(x)", .total_ns = 100'000},
                                       {.apply_name = "Log(x)", .total_ns = 100'000}});
  const Profile after = make_profile({{.apply_name = "Exp(x)", .total_ns = 300'000},
                                      {.apply_name = "Sqrt(x)", .total_ns = 100'000}});
  const nlohmann::json document =
      nlohmann::json::parse(profile::render_diff_json(profile::diff_profiles(before, after)));
  EXPECT_EQ(document["format"], "tscope-profile-diff");
  EXPECT_EQ(document["gate_failed"], true);
  EXPECT_EQ(document["nodes"]["matched"].size(), 1u);
  EXPECT_EQ(document["nodes"]["matched"][0]["name"], "Exp(x)");
  EXPECT_EQ(document["nodes"]["matched"][0]["slower"], true);
  EXPECT_EQ(document["nodes"]["appeared"][0]["name"], "Sqrt(x)");
  EXPECT_EQ(document["nodes"]["vanished"][0]["name"], "Log(x)");
  EXPECT_EQ(document["nodes"]["matched"][0]["fastest_ratio"], 3.0);
  EXPECT_TRUE(document["functions_appeared"].empty());
  EXPECT_TRUE(document["functions_vanished"].empty());
  EXPECT_EQ(document["options"]["slower_percent"], profile::kDefaultSlowerPercent);
}

}  // namespace
}  // namespace tscope
