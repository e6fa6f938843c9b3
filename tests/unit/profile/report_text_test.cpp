// SPDX-License-Identifier: Apache-2.0
#include "support/test_util.h"

namespace tscope {
namespace {

// A profile recorded with a fake clock: every clock read advances 1000 ns, so each node reads the
// clock twice and takes exactly 1000 ns per call.
profile::Profile fake_clock_profile(FakeClock& clock, int calls) {
  Variable x = matrix(DType::Float32, "x");
  Variable w = matrix(DType::Float32, "w");
  Variable y = exp(dot(x, w));
  FunctionOptions options;
  options.profile = true;
  options.clock = &clock;
  options.name = "fake";
  Function f = function({x, w}, {y}, {}, options);
  for (int i = 0; i < calls; ++i) {
    (void)f({Tensor::zeros(DType::Float32, {2, 3}), Tensor::zeros(DType::Float32, {3, 4})});
  }
  return f.collector()->snapshot();
}

TEST(ReportText, NodeCountersCountEveryCall) {
  FakeClock clock(1000);
  const profile::Profile profile = fake_clock_profile(clock, 3);
  ASSERT_EQ(profile.functions.size(), 1u);
  const auto& function = profile.functions[0];
  EXPECT_EQ(function.call_count, 3);
  ASSERT_EQ(function.nodes.size(), 2u);
  for (const auto& node : function.nodes) {
    EXPECT_EQ(node.call_count, 3);
    EXPECT_EQ(node.total_ns, 3000);
    EXPECT_EQ(node.min_ns, 1000);
    EXPECT_EQ(node.max_ns, 1000);
  }
  EXPECT_EQ(function.nodes[0].impl, "dnnl");
  EXPECT_DOUBLE_EQ(function.nodes[0].flops_per_call, 2.0 * 2 * 3 * 4);
  EXPECT_EQ(function.nodes[0].inputs[0].shape, (std::vector<std::int64_t>{2, 3}));
}

TEST(ReportText, TablesHaveTheTheanoLayout) {
  FakeClock clock(1000);
  const std::string text = profile::render_text(fake_clock_profile(clock, 2));
  EXPECT_NE(text.find("Function profiling\n==================\n  Message: fake\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  Time in 2 calls to Function.__call__: "), std::string::npos);
  EXPECT_NE(
      text.find(
          "<% time> <sum %> <apply time> <time per call> <impl> <#call> <#apply> <Class name>"),
      std::string::npos);
  // Two nodes of equal time: 50% each, the running sum reaches 100%.
  EXPECT_NE(text.find("  50.0%    50.0%       0.000s       1.00e-06s "), std::string::npos) << text;
  EXPECT_NE(text.find("  50.0%   100.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("(x, w)\n"), std::string::npos) << text;  // the dot node's Apply row
}

TEST(ReportText, TruncationFooterCountsTheRest) {
  FakeClock clock(1000);
  const std::string text =
      profile::render_text(fake_clock_profile(clock, 1), {.n_ops = 1, .n_apply = 1});
  EXPECT_NE(text.find("... (remaining 1 Classes account for  50.00%(0.00s) of the runtime)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("... (remaining 1 Apply instances account for 50.00%(0.00s) of the runtime)"),
            std::string::npos)
      << text;
}

TEST(ReportText, ProfilingOffRecordsNothing) {
  Variable x = vector(DType::Float32, "x");
  Function f = function({x}, {x + 1.0});
  (void)f({Tensor::zeros(DType::Float32, {2})});
  EXPECT_EQ(f.collector(), nullptr);
  EXPECT_EQ(f.profile_record().call_count, 0);
}

}  // namespace
}  // namespace tscope
