// SPDX-License-Identifier: Apache-2.0
// Minimum peak over valid node orders: hand-checked graphs, a brute-force cross-check, the bound
// when the search stops, and the report line through a JSON round trip.
#include <algorithm>
#include <numeric>
#include <set>

#include "support/test_util.h"
#include "tscope/models/mlp_training.h"
#include "tscope/profile/json_export.h"
#include "tscope/profile/memory_model.h"
#include "tscope/profile/min_peak_search.h"

namespace tscope {
namespace {

using profile::FunctionRecord;
using profile::MinPeakOptions;
using profile::MinPeakResult;
using profile::NodeRecord;

constexpr std::int64_t kNoBudgetLimit = std::int64_t{1} << 62;

NodeRecord node(std::string name,
                std::vector<std::int64_t> inputs,
                std::int64_t output,
                std::int64_t float32_count,
                std::string code = "c",
                std::int64_t aliased_input = -1) {
  NodeRecord record;
  record.apply_name = std::move(name);
  record.input_ids = std::move(inputs);
  record.output_ids = {output};
  profile::TensorRecord tensor;
  tensor.dtype = "float32";
  tensor.shape = {float32_count};
  record.outputs = {tensor};
  record.output_alias = {std::move(code)};
  record.output_alias_input = {aliased_input};
  return record;
}

FunctionRecord with_topo_indices(FunctionRecord function) {
  for (std::size_t i = 0; i < function.nodes.size(); ++i)
    function.nodes[i].topo_index = static_cast<std::int64_t>(i);
  return function;
}

// Two branches from x(0), executed breadth-first: big_a, big_b, small_a, small_b.
FunctionRecord two_branches() {
  FunctionRecord function;
  function.input_ids = {0};
  function.output_ids = {3, 4};
  function.nodes = {node("big_a", {0}, 1, 1000), node("big_b", {0}, 2, 1000),
                    node("small_a", {1}, 3, 1), node("small_b", {2}, 4, 1)};
  return with_topo_indices(function);
}

std::int64_t peak_of(const FunctionRecord& function, const std::vector<std::size_t>& order) {
  return profile::simulate_memory(function, order, true).peak_bytes;
}

TEST(MinPeak, FindsAnOrderBelowTheExecutedOne) {
  const FunctionRecord function = two_branches();
  // Executed: both 4000 B intermediates live together with small_a: 8004 B.
  EXPECT_EQ(peak_of(function, profile::executed_order(function)), 8004);
  // Best: finish one branch first. big_a (4000), small_a (4004), big_a freed (4), big_b (4004),
  // small_b (4008).
  FakeClock clock(1);
  const MinPeakResult result =
      profile::search_min_peak(function, {.clock = &clock}, kNoBudgetLimit);
  EXPECT_TRUE(result.record.searched);
  EXPECT_TRUE(result.record.exact);
  EXPECT_EQ(result.record.peak_bytes, 4008);
  EXPECT_EQ(result.record.lower_bound_bytes, 4008);
  EXPECT_TRUE(result.record.stop_reason.empty());
  ASSERT_EQ(result.order.size(), 4u);
  EXPECT_EQ(peak_of(function, result.order), 4008);
}

// x(0) -> a(1) [400 B], v(2) = view(a), b(3) [800 B], c(4) = h(v, b) [200 B],
// d(5) = inplace(b) [800 B], e(6) = k(a) [1200 B], s(7) = sum(e) [4 B]; kept: c, d, s.
FunctionRecord mixed_graph() {
  FunctionRecord function;
  function.input_ids = {0};
  function.output_ids = {4, 5, 7};
  function.nodes = {
      node("a", {0}, 1, 100),   node("v", {1}, 2, 100, "v", 0), node("b", {0}, 3, 200),
      node("c", {2, 3}, 4, 50), node("d", {3}, 5, 200, "i", 0), node("e", {1}, 6, 300),
      node("s", {6}, 7, 1)};
  return with_topo_indices(function);
}

TEST(MinPeak, MatchesBruteForceOverEveryValidOrder) {
  const FunctionRecord function = mixed_graph();
  std::vector<std::size_t> order(function.nodes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto position = [&](std::size_t node_index) {
    return std::find(order.begin(), order.end(), node_index) - order.begin();
  };
  // Producers first; c reads b before d overwrites it.
  const std::vector<std::pair<std::size_t, std::size_t>> before = {{0, 1}, {1, 3}, {2, 3}, {2, 4},
                                                                   {0, 5}, {5, 6}, {3, 4}};
  std::int64_t minimum = std::numeric_limits<std::int64_t>::max();
  int valid_orders = 0;
  do {
    const bool valid = std::all_of(before.begin(), before.end(), [&](const auto& edge) {
      return position(edge.first) < position(edge.second);
    });
    if (!valid) continue;
    ++valid_orders;
    minimum = std::min(minimum, peak_of(function, order));
  } while (std::next_permutation(order.begin(), order.end()));
  ASSERT_GT(valid_orders, 10);

  const MinPeakResult result = profile::search_min_peak(function, {}, kNoBudgetLimit);
  EXPECT_TRUE(result.record.exact);
  EXPECT_EQ(result.record.peak_bytes, minimum);
  EXPECT_EQ(peak_of(function, result.order), minimum);
  EXPECT_LT(minimum, peak_of(function, profile::executed_order(function)));
}

// Random DAGs of 7 nodes (views, in-place nodes, unread and kept outputs) against every valid
// order: the forced moves and the memo must never lose the minimum.
TEST(MinPeak, MatchesBruteForceOnRandomGraphs) {
  std::uint64_t seed = 12345;
  auto next = [&seed](std::uint64_t bound) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % bound;
  };
  for (int trial = 0; trial < 40; ++trial) {
    FunctionRecord function;
    function.input_ids = {0};
    const std::size_t count = 7;
    for (std::size_t i = 0; i < count; ++i) {
      const auto output = static_cast<std::int64_t>(i + 1);
      std::vector<std::int64_t> inputs = {static_cast<std::int64_t>(next(i + 1))};
      if (next(2) == 0) inputs.push_back(static_cast<std::int64_t>(next(i + 1)));
      const std::uint64_t kind = next(6);
      const std::string code = kind == 0 ? "v" : (kind == 1 ? "i" : "c");
      function.nodes.push_back(node("n" + std::to_string(i), inputs, output,
                                    1 + static_cast<std::int64_t>(next(100)), code,
                                    code == "c" ? -1 : 0));
      if (next(4) == 0) function.output_ids.push_back(output);
    }
    function.output_ids.push_back(static_cast<std::int64_t>(count));
    function = with_topo_indices(function);

    // Valid: producers first, and an in-place node after every earlier reader of the buffer it
    // overwrites (found here by following view/in-place outputs back to their buffer).
    std::vector<std::int64_t> root(count + 1);
    std::iota(root.begin(), root.end(), 0);
    for (std::size_t i = 0; i < count; ++i) {
      if (function.nodes[i].output_alias[0] != "c")
        root[i + 1] = root[static_cast<std::size_t>(function.nodes[i].input_ids[0])];
    }
    std::vector<std::pair<std::size_t, std::size_t>> before;
    for (std::size_t i = 0; i < count; ++i) {
      for (std::int64_t input : function.nodes[i].input_ids) {
        if (input > 0) before.emplace_back(static_cast<std::size_t>(input - 1), i);
      }
      if (function.nodes[i].output_alias[0] != "i") continue;
      const std::int64_t buffer = root[static_cast<std::size_t>(function.nodes[i].input_ids[0])];
      for (std::size_t reader = 0; reader < i; ++reader) {
        for (std::int64_t input : function.nodes[reader].input_ids) {
          if (root[static_cast<std::size_t>(input)] == buffer) before.emplace_back(reader, i);
        }
      }
    }
    std::vector<std::size_t> order(count);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::int64_t minimum = std::numeric_limits<std::int64_t>::max();
    do {
      std::vector<std::size_t> position(count);
      for (std::size_t k = 0; k < count; ++k) position[order[k]] = k;
      const bool valid = std::all_of(before.begin(), before.end(), [&](const auto& edge) {
        return position[edge.first] < position[edge.second];
      });
      if (valid) minimum = std::min(minimum, peak_of(function, order));
    } while (std::next_permutation(order.begin(), order.end()));

    const MinPeakResult result = profile::search_min_peak(function, {}, kNoBudgetLimit);
    EXPECT_TRUE(result.record.exact) << "trial " << trial;
    EXPECT_EQ(result.record.peak_bytes, minimum) << "trial " << trial;
    EXPECT_EQ(peak_of(function, result.order), minimum) << "trial " << trial;
    EXPECT_LE(result.record.lower_bound_bytes, minimum) << "trial " << trial;
  }
}

TEST(MinPeak, InplaceNodeRunsAfterTheReadersOfItsBuffer) {
  // b(1) [400 B], big(2) [4000 B], c(3) = h(b) [2000 B], d(4) = inplace(b, big) [into b].
  // Running d early would free big before c allocates (peak 4400 B), but d overwrites b, which c
  // must read first: c then runs while big is live, 400 + 4000 + 2000 = 6400 B in every valid
  // order.
  FunctionRecord function;
  function.input_ids = {0};
  function.output_ids = {3, 4};
  function.nodes = {node("b", {0}, 1, 100), node("big", {0}, 2, 1000), node("c", {1}, 3, 500),
                    node("d", {1, 2}, 4, 100, "i", 0)};
  const MinPeakResult result =
      profile::search_min_peak(with_topo_indices(function), {}, kNoBudgetLimit);
  EXPECT_TRUE(result.record.exact);
  EXPECT_EQ(result.record.peak_bytes, 6400);
  const auto at = [&](std::size_t node_index) {
    return std::find(result.order.begin(), result.order.end(), node_index) - result.order.begin();
  };
  ASSERT_EQ(result.order.size(), 4u);
  EXPECT_LT(at(2), at(3));
}

TEST(MinPeak, ExhaustedBudgetReportsALabelledBound) {
  const FunctionRecord function = two_branches();
  FakeClock clock(1000);
  const MinPeakResult result = profile::search_min_peak(function, {.clock = &clock}, 0);
  EXPECT_TRUE(result.record.searched);
  EXPECT_FALSE(result.record.exact);
  EXPECT_EQ(result.record.stop_reason, "time budget used up");
  // Upper: the greedy order (finish a branch first) = 4008. Lower: small_a needs big_a's 4000 B
  // and its own 4 B live.
  EXPECT_EQ(result.record.peak_bytes, 4008);
  EXPECT_EQ(result.record.lower_bound_bytes, 4004);
  EXPECT_EQ(peak_of(function, result.order), 4008);
  // Clock reads: start, the first expansion's budget check, end.
  EXPECT_EQ(result.record.search_ns, 2000);
}

TEST(MinPeak, LargeGraphsGetTheBoundWithoutSearching) {
  const MinPeakResult result =
      profile::search_min_peak(two_branches(), {.max_exact_nodes = 2}, kNoBudgetLimit);
  EXPECT_FALSE(result.record.exact);
  EXPECT_EQ(result.record.stop_reason, "4 nodes, over the exact search's 2");
  EXPECT_LE(result.record.lower_bound_bytes, result.record.peak_bytes);
}

TEST(MinPeak, BoundReachedNeedsNoSearch) {
  FunctionRecord function;
  function.input_ids = {0};
  function.output_ids = {2};
  function.nodes = {node("a", {0}, 1, 10), node("b", {1}, 2, 10)};
  const MinPeakResult result =
      profile::search_min_peak(with_topo_indices(function), {}, /*budget_ns=*/0);
  EXPECT_TRUE(result.record.exact);  // 80 B: a and b live together, as in any order
  EXPECT_EQ(result.record.peak_bytes, 80);
}

// The built-in training graph (55 nodes): exact within the budget, and the order found is a
// valid order that the memory model agrees with.
TEST(MinPeak, TrainingGraphOrderIsValidAndReachesThePeak) {
  FakeClock clock(1000);
  models::MlpTrainingConfig config;
  config.steps = 1;
  config.batch_size = 16;
  config.options.profile = true;
  config.options.clock = &clock;
  const models::TrainingRun run = models::train_mlp(config);
  const FunctionRecord function = run.train->profile_record();
  const MinPeakResult result = profile::search_min_peak(function, {}, 10'000'000'000);
  ASSERT_TRUE(result.record.exact);
  EXPECT_EQ(peak_of(function, result.order), result.record.peak_bytes);
  EXPECT_LE(result.record.peak_bytes, peak_of(function, profile::executed_order(function)));
  std::set<std::int64_t> available(function.input_ids.begin(), function.input_ids.end());
  ASSERT_EQ(result.order.size(), function.nodes.size());
  for (std::size_t index : result.order) {
    for (std::int64_t id : function.nodes[index].input_ids) {
      EXPECT_EQ(available.count(id), 1u) << function.nodes[index].apply_name;
    }
    for (std::int64_t id : function.nodes[index].output_ids) available.insert(id);
  }
}

// The spec's regression vector: the reference's minimum over orders is 4104 KB.
profile::Profile regression_vector_profile(FakeClock& clock) {
  Variable x0 = vector(DType::Float32, "x0");
  Variable x1 = vector(DType::Float32, "x1");
  Variable x2 = vector(DType::Float32, "x2");
  auto outer = [](const Variable& a, const Variable& b) {
    return dimshuffle(a, {0, kNewAxis}) * dimshuffle(b, {kNewAxis, 0});
  };
  FunctionOptions options;
  options.excluded_rewrites = {"fuse_elementwise"};  // the regression is node for node
  options.profile = true;
  options.clock = &clock;
  options.name = "regression";
  Function f =
      function({x0, x1, x2}, {sum(outer(x0, x1), {1}), sum(outer(x1, x2), {1}), x0 + x1, x1 + x2},
               {}, options);
  const Tensor v = Tensor::zeros(DType::Float32, {1024});
  (void)f({v, v, v});
  profile::Profile profile = f.collector()->snapshot();
  profile.grad_ns = 0;
  profile.since_load_ns = 0;
  return profile;
}

TEST(MinPeak, RegressionVectorMatchesTheReference) {
  FakeClock clock(1000);
  profile::Profile profile = regression_vector_profile(clock);
  FakeClock search_clock(1000);
  profile::add_min_peaks(profile, {.clock = &search_clock});
  const profile::MinPeakRecord& min_peak = profile.functions[0].min_peak;
  EXPECT_TRUE(min_peak.exact);
  EXPECT_EQ(min_peak.peak_bytes, 4194304 + 2 * 4096);  // 4104 KB
}

TEST(MinPeak, ReportLineSurvivesTheJsonRoundTrip) {
  FakeClock clock(1000);
  profile::Profile profile = regression_vector_profile(clock);
  FakeClock search_clock(1000);
  profile::add_min_peaks(profile, {.clock = &search_clock});
  profile::TextReportOptions options;
  options.show_memory = true;
  const std::string text = profile::render_text(profile, options);
  EXPECT_NE(text.find("---\n    Minimum peak from all valid apply node order is 4104KB (took "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("s to compute) [exact]\n---\n"), std::string::npos) << text;

  const profile::ProfileDocument document =
      profile::parse_profile_json(profile::to_json_text({profile}, options), "min_peak");
  ASSERT_EQ(document.profiles.size(), 1u);
  EXPECT_EQ(document.profiles[0].functions[0].min_peak.peak_bytes, 4194304 + 2 * 4096);
  EXPECT_EQ(profile::render_text(document.profiles[0], document.report), text);
}

TEST(MinPeak, BoundIsPrintedWithItsReason) {
  profile::Profile profile;
  profile.functions.push_back(two_branches());
  FakeClock clock(1000);
  profile::add_min_peaks(profile, {.time_budget_ns = 0, .clock = &clock});
  const std::string text = profile::render_memory_section(profile, {});
  EXPECT_NE(text.find("    Minimum peak from all valid apply node order is between 4KB and 4KB "
                      "(took 0.000s to compute) [bound: time budget used up]\n"),
            std::string::npos)
      << text;
  // Not searched: no line.
  profile.functions[0].min_peak = {};
  EXPECT_EQ(profile::render_memory_section(profile, {}).find("Minimum peak"), std::string::npos);
}

}  // namespace
}  // namespace tscope
