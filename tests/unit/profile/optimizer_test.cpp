// SPDX-License-Identifier: Apache-2.0
// The Optimizer Profile: per-rewrite figures copied from the rewrite pipeline into the compile
// record, the section's layout, its flag, and the JSON round trip.
#include "support/test_util.h"
#include "tscope/profile/json_export.h"

namespace tscope {
namespace {

// exp(x) twice (merged into one, then fused with the add) and dot(x, w) + b (Dot -> Dot22 -> Gemm:
// two changes).
profile::Profile rewritten_profile(FakeClock& clock) {
  Variable x = matrix(DType::Float32, "x");
  Variable w = matrix(DType::Float32, "w");
  Variable b = vector(DType::Float32, "b");
  FunctionOptions options;
  options.profile = true;
  options.clock = &clock;
  options.name = "rewritten";
  Function f = function({x, w, b}, {exp(x) + exp(x), dot(x, w) + b}, {}, options);
  (void)f({Tensor::zeros(DType::Float32, {2, 3}), Tensor::zeros(DType::Float32, {3, 4}),
           Tensor::zeros(DType::Float32, {4})});
  profile::Profile profile = f.collector()->snapshot();
  profile.grad_ns = 0;
  profile.since_load_ns = 0;
  return profile;
}

TEST(OptimizerProfile, CompileRecordCarriesEveryRewrite) {
  FakeClock clock(1000);
  const profile::CompileRecord compile = rewritten_profile(clock).functions[0].compile;
  struct Expected {
    std::string name;
    std::int64_t duration_ns, attempts, applied, created, removed;
  };
  // The fake clock advances 1000 ns per read. A whole-graph pass is timed by two reads and looks
  // at every node; a local rule by two reads per node of the op it tracks.
  const std::vector<Expected> expected = {
      // exp(x) + exp(x): the second exp joins the first (one node leaves).
      {"merge_duplicate_nodes", 1000, 5, 1, 0, 1},
      // No loop: the loop rules are never tried, and the loop passes look and change nothing.
      {"hoist_loop_invariants", 0, 0, 0, 0, 0},
      {"merge_sibling_loops", 1000, 4, 0, 0, 0},
      {"push_out_sequence_work", 0, 0, 0, 0, 0},
      {"keep_last_steps_only", 1000, 4, 0, 0, 0},
      {"push_out_accumulated_products", 0, 0, 0, 0, 0},
      // One Dot becomes a Dot22 ...
      {"dot_to_dot22", 1000, 1, 1, 1, 1},
      // ... and of the two adds, the one of the product becomes Gemm (the add and Dot22 leave).
      {"gemm_from_scaled_sum", 2000, 2, 1, 1, 2},
      // The other add, of two exps, has no reshaped product to take.
      {"gemm_through_row_split", 1000, 1, 0, 0, 0},
      // No DimShuffle: the transpose rule is never tried.
      {"transpose_through_dot22", 0, 0, 0, 0, 0},
      // No Mul: the GELU rule is never tried.
      {"fuse_gemm_gelu", 0, 0, 0, 0, 0},
      // No convolution: the kernel rule is never tried.
      {"crop_idle_kernel_taps", 0, 0, 0, 0, 0},
      // No AveragePool: the pool rule is never tried.
      {"pool_before_pointwise_conv", 0, 0, 0, 0, 0},
      {"use_channel_blocks", 1000, 3, 0, 0, 0},
      // No Pow and no Minimum: the rules are never tried.
      {"specialize_pow", 0, 0, 0, 0, 0},
      {"fuse_clamps", 0, 0, 0, 0, 0},
      // The add of two exps is no layer normalisation's last step.
      {"fuse_layer_norms", 1000, 1, 0, 0, 0},
      // The exp and the add reading it twice become one Composite.
      {"fuse_elementwise", 1000, 3, 1, 1, 2},
      {"fold_constant_layouts", 1000, 2, 0, 0, 0},
      // The Composite reads only the input x and Gemm only inputs: nothing to overwrite.
      {"use_inplace", 1000, 2, 0, 0, 0}};
  ASSERT_EQ(compile.rewrites.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const profile::RewriteRecord& rule = compile.rewrites[i];
    SCOPED_TRACE(expected[i].name);
    EXPECT_EQ(rule.name, expected[i].name);
    EXPECT_EQ(rule.duration_ns, expected[i].duration_ns);
    EXPECT_EQ(rule.attempts, expected[i].attempts);
    EXPECT_EQ(rule.applied_count, expected[i].applied);
    EXPECT_EQ(rule.nodes_created, expected[i].created);
    EXPECT_EQ(rule.nodes_removed, expected[i].removed);
  }
  // exp, exp, add, dot, add -> Composite{(exp(i0) + exp(i0))}, gemm.
  EXPECT_EQ(compile.nodes_before_rewrite, 5);
  EXPECT_EQ(compile.nodes_after_rewrite, 2);
  EXPECT_GT(compile.validate_ns, 0);
}

TEST(OptimizerProfile, SectionListsRewritesCostliestFirst) {
  profile::Profile profile;
  profile::FunctionRecord function;
  function.compile.rewrite_ns = 10'000;
  function.compile.validate_ns = 2'000;
  function.compile.nodes_before_rewrite = 12;
  function.compile.nodes_after_rewrite = 9;
  function.compile.rewrites = {{"merge_duplicate_nodes", 2'000, 0, 12, 0, 0},
                               {"dot_to_dot22", 6'000, 3, 4, 3, 3}};
  profile.functions = {function, function};
  EXPECT_EQ(profile::render_optimizer_section(profile),
            "Optimizer Profile\n"
            "-----------------\n"
            "  Rewrite pipeline time 2.000e-05s for 24/18 nodes before/after rewriting "
            "(2 functions)\n"
            "      4.000e-06s for validation (the verifier, once after all rewrites)\n"
            "       <time> <% of rewriting> <#tried> <#applied> <+nodes> <-nodes> <rewrite>\n"
            "   1.200e-05s            60.0%        8          6        6        6 dot_to_dot22\n"
            "   4.000e-06s            20.0%       24          0        0        0 "
            "merge_duplicate_nodes\n"
            "  Rewrites that never applied: merge_duplicate_nodes\n"
            "\n");
  profile.functions = {profile::FunctionRecord{}};
  EXPECT_EQ(profile::render_optimizer_section(profile),
            "Optimizer Profile\n-----------------\n  No rewrite was recorded.\n\n");
}

TEST(OptimizerProfile, PrintedOnlyWithTheFlagAndBeforeTheTips) {
  FakeClock clock(1000);
  const profile::Profile profile = rewritten_profile(clock);
  EXPECT_EQ(profile::render_text(profile).find("Optimizer Profile"), std::string::npos);
  const profile::TextReportOptions options =
      profile::report_options(profile::parse_flags("profile_optimizer=true"));
  EXPECT_TRUE(options.show_optimizer);
  const std::string text = profile::render_text(profile, options);
  const std::size_t section = text.find("Optimizer Profile\n-----------------\n");
  ASSERT_NE(section, std::string::npos) << text;
  EXPECT_LT(section, text.find("Here are tips"));
  EXPECT_NE(text.find("          1        0        1 merge_duplicate_nodes\n", section),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("          1        1        1 dot_to_dot22\n", section), std::string::npos)
      << text;
}

TEST(OptimizerProfile, JsonRoundTripKeepsTheSection) {
  FakeClock clock(1000);
  const profile::Profile profile = rewritten_profile(clock);
  profile::TextReportOptions options;
  options.show_optimizer = true;
  const profile::ProfileDocument document =
      profile::parse_profile_json(profile::to_json_text({profile}, options), "optimizer");
  EXPECT_TRUE(document.report.show_optimizer);
  ASSERT_EQ(document.profiles.size(), 1u);
  ASSERT_FALSE(profile.functions[0].compile.rewrites.empty());
  EXPECT_EQ(document.profiles[0].functions[0].compile.rewrites.size(),
            profile.functions[0].compile.rewrites.size());
  EXPECT_EQ(profile::render_text(document.profiles[0], document.report),
            profile::render_text(profile, options));
}

}  // namespace
}  // namespace tscope
