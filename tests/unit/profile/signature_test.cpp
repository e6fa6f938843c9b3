// SPDX-License-Identifier: Apache-2.0
// Time per input signature: recorded by the VM from the node counters at each signature change,
// and the "Apply by input signature" section (automatic for nodes with several, every node with
// --by-signature), through a JSON round trip.
#include "support/test_util.h"
#include "tscope/profile/json_export.h"

namespace tscope {
namespace {

// exp(x) called with vectors of these sizes; with the fake clock every node call takes 1000 ns.
Function exp_function(FakeClock& clock, bool ignore_first_call = false) {
  Variable x = vector(DType::Float32, "x");
  FunctionOptions options;
  options.profile = true;
  options.clock = &clock;
  options.name = "shapes";
  options.ignore_first_call = ignore_first_call;
  return function({x}, {exp(x)}, {}, options);
}

void call_with_sizes(const Function& f, std::initializer_list<std::int64_t> sizes) {
  for (std::int64_t size : sizes) (void)f({Tensor::zeros(DType::Float32, {size})});
}

profile::Profile deterministic(profile::Profile profile) {
  profile.grad_ns = 0;
  profile.since_load_ns = 0;
  return profile;
}

TEST(SignatureTiming, EachSignatureGetsItsCallsAndTime) {
  FakeClock clock(1000);
  Function f = exp_function(clock);
  call_with_sizes(f, {4, 4, 8});
  // A snapshot in the middle (the 8 run still open) must not disturb the counting.
  const profile::NodeRecord early = f.profile_record().nodes[0];
  ASSERT_EQ(early.signatures.size(), 2u);
  EXPECT_EQ(early.signatures[1].total_ns, 1000);
  call_with_sizes(f, {4, 16});
  const profile::NodeRecord node = f.profile_record().nodes[0];
  ASSERT_EQ(node.signatures.size(), 3u);
  EXPECT_EQ(node.signatures[0].timed_call_count, 3);  // sizes 4: calls 1, 2 and 4
  EXPECT_EQ(node.signatures[0].total_ns, 3000);
  EXPECT_EQ(node.signatures[1].timed_call_count, 1);
  EXPECT_EQ(node.signatures[1].total_ns, 1000);
  EXPECT_EQ(node.signatures[2].timed_call_count, 1);  // the open run of the last call
  EXPECT_EQ(node.signatures[2].total_ns, 1000);
  std::int64_t sum_ns = 0, sum_calls = 0;
  for (const profile::SignatureRecord& signature : node.signatures) {
    sum_ns += signature.total_ns;
    sum_calls += signature.timed_call_count;
    EXPECT_EQ(signature.timed_call_count, signature.call_count);
  }
  EXPECT_EQ(sum_ns, node.total_ns);
  EXPECT_EQ(sum_calls, node.call_count);
}

TEST(SignatureTiming, IgnoredFirstCallKeepsItsSignatureButNotItsTime) {
  FakeClock clock(1000);
  Function f = exp_function(clock, /*ignore_first_call=*/true);
  call_with_sizes(f, {4, 8, 8, 4});
  const profile::NodeRecord node = f.profile_record().nodes[0];
  ASSERT_EQ(node.signatures.size(), 2u);
  EXPECT_EQ(node.signatures[0].call_count, 2);  // the dropped first call is still counted here
  EXPECT_EQ(node.signatures[0].timed_call_count, 1);
  EXPECT_EQ(node.signatures[0].total_ns, 1000);
  EXPECT_EQ(node.signatures[1].timed_call_count, 2);
  EXPECT_EQ(node.signatures[1].total_ns, 2000);
  EXPECT_EQ(node.call_count, 3);
  EXPECT_EQ(node.total_ns, 3000);
}

TEST(SignatureSection, PrintedForNodesWithSeveralSignatures) {
  FakeClock clock(1000);
  Function f = exp_function(clock);
  call_with_sizes(f, {4, 4, 8, 4, 16});
  const std::string text = profile::render_text(deterministic(f.collector()->snapshot()));
  const std::string expected =
      "Apply by input signature (nodes called with several)\n"
      "----------------------------------------------------\n"
      "    <% node time> <apply time> <time per call> <#call> <input signature>\n"
      "  node 0: Elemwise{exp,no_inplace}(x) (5 calls, 3 signatures)\n"
      "            60.0%   3.000e-06s       1.00e-06s       3 float32 (4,)\n"
      "            20.0%   1.000e-06s       1.00e-06s       1 float32 (8,)\n"
      "            20.0%   1.000e-06s       1.00e-06s       1 float32 (16,)\n"
      "\n";
  const std::size_t at = text.find(expected);
  ASSERT_NE(at, std::string::npos) << text;
  // Right after the Apply table.
  EXPECT_LT(text.find("Apply\n------\n"), at);
  EXPECT_EQ(text.find("Apply by input signature", at + 1), std::string::npos);
}

TEST(SignatureSection, QuietWhenEveryNodeSawOneSignatureUnlessAskedFor) {
  FakeClock clock(1000);
  Function f = exp_function(clock);
  call_with_sizes(f, {4, 4});
  const profile::Profile profile = deterministic(f.collector()->snapshot());
  EXPECT_EQ(profile::render_text(profile).find("Apply by input signature"), std::string::npos);
  profile::TextReportOptions options;
  options.show_signatures = true;
  EXPECT_NE(profile::render_text(profile, options)
                .find("Apply by input signature\n------------------------\n"
                      "    <% node time> <apply time> <time per call> <#call> <input signature>\n"
                      "  node 0: Elemwise{exp,no_inplace}(x) (2 calls, 1 signature)\n"
                      "           100.0%   2.000e-06s       1.00e-06s       2 float32 (4,)\n"),
            std::string::npos)
      << profile::render_text(profile, options);
}

TEST(SignatureSection, StridesShownForNonContiguousInputsAndRowsCut) {
  FakeClock clock(1000);
  Variable x = matrix(DType::Float32, "x");
  FunctionOptions options;
  options.excluded_rewrites = {"fuse_elementwise"};  // two nodes, one row cut
  options.profile = true;
  options.clock = &clock;
  Function f = function({x}, {exp(x) + x}, {}, options);
  const Tensor value = testing::random_tensor(DType::Float32, {3, 4}, 1);
  (void)f({value});
  (void)f({testing::non_contiguous_copy(value)});
  profile::TextReportOptions report;
  report.n_apply = 1;
  const std::string text = profile::render_text(deterministic(f.collector()->snapshot()), report);
  const std::size_t at = text.find("Apply by input signature (nodes called with several)");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_NE(text.find("float32 (3, 4) strides (", at), std::string::npos) << text;
  EXPECT_NE(text.find("   ... (remaining 1 Apply nodes not shown)\n", at), std::string::npos)
      << text;
}

TEST(SignatureSection, JsonRoundTripRendersTheSame) {
  FakeClock clock(1000);
  Function f = exp_function(clock);
  call_with_sizes(f, {4, 8, 8});
  const profile::Profile profile = deterministic(f.collector()->snapshot());
  profile::TextReportOptions options;
  options.show_signatures = true;
  const profile::ProfileDocument document =
      profile::parse_profile_json(profile::to_json_text({profile}, options), "signatures");
  EXPECT_TRUE(document.report.show_signatures);
  const profile::SignatureRecord& second = document.profiles[0].functions[0].nodes[0].signatures[1];
  EXPECT_EQ(second.total_ns, 2000);
  EXPECT_EQ(second.timed_call_count, 2);
  EXPECT_EQ(profile::render_text(document.profiles[0], document.report),
            profile::render_text(profile, options));
}

}  // namespace
}  // namespace tscope
