// SPDX-License-Identifier: Apache-2.0
// The VM's recording path: signatures, ignore_first_call, clock selection, overhead measurement,
// the fusion role of each node.
#include "support/test_util.h"
#include "tscope/profile/tick_clock.h"
#include "tscope/profile/tips.h"

namespace tscope {
namespace {

TEST(Recording, DistinctInputSignaturesAreCountedPerNode) {
  FakeClock clock(1000);
  Variable x = vector(DType::Float32, "x");
  FunctionOptions options;
  options.profile = true;
  options.clock = &clock;
  Function f = function({x}, {exp(x)}, {}, options);
  for (std::int64_t size : {4, 4, 8, 4, 16}) (void)f({Tensor::zeros(DType::Float32, {size})});
  const profile::FunctionRecord record = f.profile_record();
  ASSERT_EQ(record.nodes.size(), 1u);
  const profile::NodeRecord& node = record.nodes[0];
  EXPECT_EQ(node.call_count, 5);
  ASSERT_EQ(node.signatures.size(), 3u);
  EXPECT_EQ(node.signatures[0].inputs[0].shape, (std::vector<std::int64_t>{4}));
  EXPECT_EQ(node.signatures[0].call_count, 3);
  EXPECT_EQ(node.signatures[1].inputs[0].shape, (std::vector<std::int64_t>{8}));
  EXPECT_EQ(node.signatures[1].call_count, 1);
  EXPECT_EQ(node.signatures[2].call_count, 1);
  EXPECT_EQ(node.signatures[2].outputs[0].shape, (std::vector<std::int64_t>{16}));
  // The last call's tensors are the last signature's.
  EXPECT_EQ(node.inputs[0].shape, (std::vector<std::int64_t>{16}));
  EXPECT_EQ(node.output_bytes, 16 * 4);
}

TEST(Recording, NonContiguousInputIsItsOwnSignature) {
  FakeClock clock(1000);
  Variable x = matrix(DType::Float32, "x");
  FunctionOptions options;
  options.profile = true;
  options.clock = &clock;
  Function f = function({x}, {exp(x)}, {}, options);
  const Tensor value = testing::random_tensor(DType::Float32, {3, 4}, 1);
  (void)f({value});
  (void)f({testing::non_contiguous_copy(value)});
  const profile::NodeRecord node = f.profile_record().nodes[0];
  ASSERT_EQ(node.signatures.size(), 2u);
  EXPECT_TRUE(node.signatures[0].inputs[0].contiguous);
  EXPECT_FALSE(node.signatures[1].inputs[0].contiguous);
}

TEST(Recording, BlasInputCopiesAreCountedPerNodeOverTimedCalls) {
  FakeClock clock(1000);
  Variable x = matrix(DType::Float32, "x");
  Variable y = matrix(DType::Float32, "y");
  FunctionOptions options;
  options.profile = true;
  options.clock = &clock;
  options.ignore_first_call = true;
  Function f = function({x, y}, {dot22(x, y)}, {}, options);
  const Tensor vx = testing::random_tensor(DType::Float32, {4, 6}, 1);
  const Tensor vy = testing::random_tensor(DType::Float32, {6, 3}, 2);
  const Tensor strided = testing::non_contiguous_copy(vx);
  (void)f({strided, vy});  // dropped with the first call's timings
  EXPECT_EQ(f.profile_record().nodes[0].copied_input_count, 0);
  (void)f({vx, vy});
  EXPECT_EQ(f.profile_record().nodes[0].copied_input_count, 0);
  (void)f({strided, vy});
  (void)f({strided, vy});
  const profile::NodeRecord node = f.profile_record().nodes[0];
  EXPECT_EQ(node.call_count, 3);
  EXPECT_EQ(node.copied_input_count, 2);
  EXPECT_EQ(node.copied_input_bytes, 2 * 4 * 6 * 4);
  const std::vector<profile::Tip> tips = profile::collect_tips(f.collector()->snapshot());
  EXPECT_TRUE(std::any_of(tips.begin(), tips.end(), [](const profile::Tip& tip) {
    return tip.rule == "blas_input_copy" && tip.text.find("recording_test.cpp:") != std::string::npos;
  }));
}

TEST(Recording, IgnoreFirstCallDropsOnlyTheFirstCallsTimings) {
  FakeClock clock(1000);
  Variable x = vector(DType::Float32, "x");
  FunctionOptions options;
  options.profile = true;
  options.clock = &clock;
  options.ignore_first_call = true;
  Function f = function({x}, {exp(x)}, {}, options);
  (void)f({Tensor::zeros(DType::Float32, {4})});
  EXPECT_EQ(f.profile_record().call_count, 0);
  EXPECT_EQ(f.profile_record().nodes[0].call_count, 0);
  (void)f({Tensor::zeros(DType::Float32, {4})});
  (void)f({Tensor::zeros(DType::Float32, {4})});
  const profile::FunctionRecord record = f.profile_record();
  EXPECT_EQ(record.call_count, 2);
  EXPECT_EQ(record.nodes[0].call_count, 2);
  EXPECT_EQ(record.nodes[0].total_ns, 2000);
  // Signatures describe the graph and keep the first call.
  EXPECT_EQ(record.nodes[0].signatures[0].call_count, 3);
}

TEST(Recording, InjectedClockReportsNoMeasuredOverhead) {
  FakeClock clock(1000);
  Variable x = vector(DType::Float32, "x");
  FunctionOptions options;
  options.profile = true;
  options.clock = &clock;
  Function f = function({x}, {exp(x)}, {}, options);
  (void)f({Tensor::zeros(DType::Float32, {4})});
  const profile::Profile profile = f.collector()->snapshot();
  EXPECT_EQ(profile.clock, "injected");
  EXPECT_LT(profile.overhead_ns_per_node, 0);
}

TEST(Recording, RealClockIsMeasuredAndConverted) {
  Variable x = vector(DType::Float32, "x");
  FunctionOptions options;
  options.profile = true;
  Function f = function({x}, {exp(x)}, {}, options);
  for (int i = 0; i < 3; ++i) (void)f({Tensor::zeros(DType::Float32, {4096})});
  const profile::Profile profile = f.collector()->snapshot();
  const profile::TickSource& ticks = profile::measured_tick_source();
  EXPECT_EQ(profile.clock, ticks.name);
  EXPECT_GT(ticks.read_cost_ns, 0.0);
  EXPECT_GE(profile.overhead_ns_per_node, 0.0);
  const profile::NodeRecord& node = profile.functions[0].nodes[0];
  // Converted to ns: within the function's VM time, and min <= mean <= max.
  EXPECT_GT(node.total_ns, 0);
  EXPECT_LE(node.total_ns, profile.functions[0].vm_ns);
  EXPECT_LE(node.min_ns * 3, node.total_ns);
  EXPECT_GE(node.max_ns * 3, node.total_ns);
  if (ticks.use_tsc) {
    EXPECT_GT(ticks.ns_per_tick, 0.01);
    EXPECT_LT(ticks.ns_per_tick, 100.0);
  }
}

TEST(Recording, FailingCallKeepsTheCountersOfTheNodesThatRan) {
  FakeClock clock(1000);
  Variable x = vector(DType::Float32, "x");
  Variable y = vector(DType::Float32, "y");
  FunctionOptions options;
  options.excluded_rewrites = {"fuse_elementwise"};  // exp must run before the add fails
  options.profile = true;
  options.clock = &clock;
  Function f = function({x, y}, {exp(x) + y}, {}, options);
  EXPECT_THROW((void)f({Tensor::zeros(DType::Float32, {4}), Tensor::zeros(DType::Float32, {3})}),
               Error);
  const profile::FunctionRecord record = f.profile_record();
  EXPECT_EQ(record.nodes[0].call_count, 1);  // exp ran; the add threw
}

const profile::NodeRecord& node_of_kind(const profile::FunctionRecord& record,
                                        std::string_view op_kind) {
  for (const profile::NodeRecord& node : record.nodes) {
    if (node.op_kind == op_kind) return node;
  }
  ADD_FAILURE() << "no " << op_kind << " node";
  return record.nodes.front();
}

TEST(Recording, EachNodeRecordsItsFusionRole) {
  FakeClock clock(1000);
  Variable x = matrix(DType::Float32, "x");
  FunctionOptions options;
  options.profile = true;
  options.clock = &clock;
  // exp(x * 2) is fused into a Composite but has two readers, which stay nodes of their own; a
  // comparison read as an output stays a node but could be a step; a cast to an integer could not.
  const Variable e = exp(x * 2.0);
  Function f = function({x}, {sum(e, {1}), e + 1.0, ge(x, 0.0), cast(x, DType::Int32)}, {},
                        options);
  (void)f({testing::random_tensor(DType::Float32, {3, 4}, 1)});
  const profile::FunctionRecord record = f.profile_record();
  EXPECT_EQ(node_of_kind(record, "Composite").fusion_role, "elementwise");
  EXPECT_EQ(node_of_kind(record, "Sum").fusion_role, "reduction");
  EXPECT_EQ(node_of_kind(record, "Add").fusion_role, "elementwise");
  EXPECT_EQ(node_of_kind(record, "GE").fusion_role, "elementwise");
  EXPECT_EQ(node_of_kind(record, "Cast").fusion_role, "none");
}

// fuse_elementwise splits a chain of 200 nodes into Composites of its bounded size; the profile of
// the compiled chain names that bound as the reason they stay apart.
TEST(Recording, UnfusedChainTipNamesFusionsBoundOnALongChain) {
  FakeClock clock(1000);
  Variable x = vector(DType::Float64, "x");
  Variable y = x;
  for (int i = 0; i < 200; ++i) y = (i % 2 == 0) ? tanh(y) : y * 0.5;
  FunctionOptions options;
  options.profile = true;
  options.clock = &clock;
  Function f = function({x}, {y}, {}, options);
  (void)f({testing::random_tensor(DType::Float64, {9}, 3)});
  profile::Profile profile;
  profile.functions.push_back(f.profile_record());
  std::vector<std::string> texts;
  for (const profile::Tip& tip : profile::collect_tips(profile)) {
    if (tip.rule == "unfused_chain") texts.push_back(tip.text);
  }
  ASSERT_EQ(texts.size(), 1u);
  EXPECT_NE(texts[0].find("4 nodes of an elementwise chain, from"), std::string::npos) << texts[0];
  EXPECT_NE(texts[0].find("fusion stored 3 values between them"), std::string::npos) << texts[0];
  EXPECT_NE(texts[0].find("a fused loop already at fusion's bound on nodes"), std::string::npos)
      << texts[0];
}

}  // namespace
}  // namespace tscope
