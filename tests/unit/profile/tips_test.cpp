// SPDX-License-Identifier: Apache-2.0
// Each tip rule: a profile that makes it fire (naming the node) and one that keeps it quiet.
// Profiles are built by hand: tips are a pure function of the model.
#include "tscope/profile/tips.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tscope::profile {
namespace {

TensorRecord tensor(std::string dtype, std::vector<std::int64_t> shape) {
  TensorRecord record;
  record.dtype = std::move(dtype);
  record.shape = std::move(shape);
  return record;
}

NodeRecord node(std::string apply_name,
                std::string op_kind,
                std::string impl,
                std::vector<TensorRecord> inputs,
                std::vector<TensorRecord> outputs) {
  NodeRecord record;
  record.apply_name = std::move(apply_name);
  record.op_kind = std::move(op_kind);
  record.impl = std::move(impl);
  record.inputs = std::move(inputs);
  record.outputs = std::move(outputs);
  record.call_count = 10;
  record.total_ns = 1'000'000;
  record.signatures.resize(1);
  return record;
}

Profile one_function(std::vector<NodeRecord> nodes) {
  Profile profile;
  FunctionRecord function;
  function.name = "f";
  function.call_count = 10;
  function.vm_ns = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].topo_index = static_cast<std::int64_t>(i);
    function.vm_ns += nodes[i].total_ns;
  }
  function.nodes = std::move(nodes);
  profile.functions.push_back(std::move(function));
  return profile;
}

std::vector<Tip> tips_of_rule(const Profile& profile, const std::string& rule) {
  std::vector<Tip> tips = collect_tips(profile);
  tips.erase(
      std::remove_if(tips.begin(), tips.end(), [&](const Tip& tip) { return tip.rule != rule; }),
      tips.end());
  return tips;
}

const TensorRecord kF32Matrix = tensor("float32", {64, 64});

TEST(Tips, NothingFiresOnAPlainFloat32Graph) {
  const Profile profile =
      one_function({node("dot(x, w)", "Dot", "blas", {kF32Matrix, kF32Matrix}, {kF32Matrix})});
  EXPECT_TRUE(collect_tips(profile).empty());
  EXPECT_NE(render_tips(profile).find("Sorry, no tip for today.\n"), std::string::npos);
}

TEST(Tips, NoBlasTipForAGemmOnOneDnnSgemm) {
  const Profile profile = one_function(
      {node("Gemm(b, x, w)", "Gemm", "dnnl", {kF32Matrix, kF32Matrix, kF32Matrix}, {kF32Matrix})});
  EXPECT_TRUE(tips_of_rule(profile, "dot_not_blas").empty());
  const Profile reference = one_function(
      {node("Gemm(b, x, w)", "Gemm", "ref", {kF32Matrix, kF32Matrix, kF32Matrix}, {kF32Matrix})});
  EXPECT_EQ(tips_of_rule(reference, "dot_not_blas").size(), 1u);
}

TEST(Tips, Float64FiresAndNamesTheNode) {
  const TensorRecord f64 = tensor("float64", {64});
  const auto tips =
      tips_of_rule(one_function({node("add(a, b)", "Add", "cpu", {f64, f64}, {f64})}), "float64");
  ASSERT_EQ(tips.size(), 1u);
  EXPECT_NE(tips[0].text.find("add(a, b) computes in float64"), std::string::npos) << tips[0].text;
  EXPECT_NE(tips[0].text.find("5.000e-04s"), std::string::npos) << tips[0].text;  // half of 1 ms
  EXPECT_NE(render_tips(one_function({node("add(a, b)", "Add", "cpu", {f64, f64}, {f64})}))
                .find("  - add(a, b) computes in float64"),
            std::string::npos);
}

TEST(Tips, Float64QuietOnFloat32) {
  const TensorRecord f32 = tensor("float32", {64});
  EXPECT_TRUE(
      tips_of_rule(one_function({node("add(a, b)", "Add", "cpu", {f32, f32}, {f32})}), "float64")
          .empty());
}

TEST(Tips, RefKernelFiresOnlyWhenAFastOneExists) {
  const TensorRecord f32 = tensor("float32", {64});
  NodeRecord slow = node("sum(x)", "Sum", "ref", {f32}, {tensor("float32", {})});
  slow.fast_impl_available = true;
  EXPECT_EQ(tips_of_rule(one_function({slow}), "ref_kernel").size(), 1u);
  slow.fast_impl_available = false;
  EXPECT_TRUE(tips_of_rule(one_function({slow}), "ref_kernel").empty());
}

TEST(Tips, DotNotOnBlasFiresForTwoMatrices) {
  const auto tips = tips_of_rule(
      one_function({node("dot(x, w)", "Dot", "ref", {kF32Matrix, kF32Matrix}, {kF32Matrix})}),
      "dot_not_blas");
  ASSERT_EQ(tips.size(), 1u);
  EXPECT_NE(tips[0].text.find("dot(x, w) is a generic Dot"), std::string::npos) << tips[0].text;
  EXPECT_NE(tips[0].text.find("float32 64x64"), std::string::npos) << tips[0].text;
}

TEST(Tips, DotNotOnBlasQuietOnBlasOrVectors) {
  EXPECT_TRUE(tips_of_rule(one_function({node("dot(x, w)", "Dot", "blas", {kF32Matrix, kF32Matrix},
                                              {kF32Matrix})}),
                           "dot_not_blas")
                  .empty());
  const TensorRecord v = tensor("float32", {64});
  EXPECT_TRUE(tips_of_rule(one_function({node("dot(x, v)", "Dot", "ref", {kF32Matrix, v}, {v})}),
                           "dot_not_blas")
                  .empty());
}

TEST(Tips, MixedDtypesInDotFiresAndListsTheTypes) {
  const auto tips = tips_of_rule(
      one_function({node("dot(x, w)", "Dot", "ref", {kF32Matrix, tensor("float64", {64, 64})},
                         {tensor("float64", {64, 64})})}),
      "dot_mixed_dtypes");
  ASSERT_EQ(tips.size(), 1u);
  EXPECT_NE(tips[0].text.find("multiplies float32 by float64"), std::string::npos) << tips[0].text;
  EXPECT_TRUE(tips_of_rule(one_function({node("dot(x, w)", "Dot", "blas", {kF32Matrix, kF32Matrix},
                                              {kF32Matrix})}),
                           "dot_mixed_dtypes")
                  .empty());
}

TEST(Tips, BlasInputCopyFiresWithTheNodeSiteAndGain) {
  TensorRecord strided = tensor("float32", {64, 64});
  strided.contiguous = false;
  strided.strides_bytes = {8, 512};
  NodeRecord dot = node("Dot22(x, w)", "Dot22", "blas", {strided, kF32Matrix}, {kF32Matrix});
  dot.source_site = "mlp.cpp:42";
  dot.copied_input_count = 10;       // one copy in each of the 10 calls
  dot.copied_input_bytes = 163'840;  // 64 x 64 float32 each time
  const auto tips = tips_of_rule(one_function({dot}), "blas_input_copy");
  ASSERT_EQ(tips.size(), 1u);
  EXPECT_NE(tips[0].text.find("Dot22(x, w) (created at mlp.cpp:42) copied 1 input(s) per call "
                              "(16384 B per call) to a contiguous buffer"),
            std::string::npos)
      << tips[0].text;
  EXPECT_NE(tips[0].text.find("(last call: input 0 (float32 64x64, strides 8, 512 B))"),
            std::string::npos)
      << tips[0].text;
  // 163840 B read and written at 2 GB/s: 1.638e-04 s of the node's 1 ms.
  EXPECT_NE(tips[0].text.find("(est. gain 1.638e-04s of its 1.000e-03s)"), std::string::npos)
      << tips[0].text;
}

TEST(Tips, BlasInputCopyQuietWhenBlasReadsTheLayoutInPlace) {
  TensorRecord transposed = tensor("float32", {64, 64});
  transposed.contiguous = false;  // a transpose: BLAS reads it through its transpose flag
  transposed.strides_bytes = {4, 256};
  NodeRecord dot = node("Dot22(x, w)", "Dot22", "blas", {transposed, kF32Matrix}, {kF32Matrix});
  EXPECT_TRUE(tips_of_rule(one_function({dot}), "blas_input_copy").empty());
  dot.copied_input_bytes = 4096;
  dot.copied_input_count = 1;
  dot.call_count = 0;  // copies from calls whose timings were dropped do not count
  EXPECT_TRUE(tips_of_rule(one_function({dot}), "blas_input_copy").empty());
}

TEST(Tips, TranscendentalNotOnSimdFires) {
  const TensorRecord f32 = tensor("float32", {1024});
  NodeRecord exp_node = node("exp(x)", "Exp", "cpu", {f32}, {f32});
  exp_node.elementwise = true;
  const auto tips = tips_of_rule(one_function({exp_node}), "transcendental_not_simd");
  ASSERT_EQ(tips.size(), 1u);
  EXPECT_NE(tips[0].text.find("exp(x) evaluates Exp elementwise on the 'cpu' path"),
            std::string::npos);
}

TEST(Tips, TranscendentalQuietOnSimdOrArithmetic) {
  const TensorRecord f32 = tensor("float32", {1024});
  NodeRecord exp_node = node("exp(x)", "Exp", "simd", {f32}, {f32});
  exp_node.elementwise = true;
  NodeRecord add_node = node("add(x, y)", "Add", "cpu", {f32, f32}, {f32});
  add_node.elementwise = true;
  EXPECT_TRUE(tips_of_rule(one_function({exp_node, add_node}), "transcendental_not_simd").empty());
}

// A chain x -> n0 -> n1 -> ... of `length` elementwise nodes; `fork_at` gives node fork_at's
// output a second reader, which breaks the chain there.
Profile elementwise_chain(std::size_t length, std::ptrdiff_t fork_at = -1) {
  std::vector<NodeRecord> nodes;
  const TensorRecord f32 = tensor("float32", {1024});
  for (std::size_t i = 0; i < length; ++i) {
    NodeRecord n = node("n" + std::to_string(i), "Add", "cpu", {f32}, {f32});
    n.elementwise = true;
    n.input_ids = {static_cast<std::int64_t>(i)};
    n.output_ids = {static_cast<std::int64_t>(i + 1)};
    nodes.push_back(n);
  }
  if (fork_at >= 0) {
    NodeRecord reader = node("reader", "Sum", "cpu", {f32}, {tensor("float32", {})});
    reader.input_ids = {fork_at + 1};
    reader.output_ids = {1000};
    nodes.push_back(reader);
  }
  Profile profile = one_function(nodes);
  profile.functions[0].input_ids = {0};
  profile.functions[0].output_ids = {static_cast<std::int64_t>(length)};
  return profile;
}

TEST(Tips, LongUnfusedChainFiresWithItsEnds) {
  const auto tips = tips_of_rule(elementwise_chain(5), "unfused_chain");
  ASSERT_EQ(tips.size(), 1u);
  EXPECT_NE(tips[0].text.find("5 unfused elementwise nodes run one after the other, from n0 to n4"),
            std::string::npos)
      << tips[0].text;
  // Four of the five 1 ms nodes could go.
  EXPECT_NE(tips[0].text.find("est. gain 4.000e-03s"), std::string::npos) << tips[0].text;
}

TEST(Tips, ShortOrForkedChainsStayQuiet) {
  EXPECT_TRUE(tips_of_rule(elementwise_chain(3), "unfused_chain").empty());
  // n2's output is read twice: the runs n0-n2 and n3-n5 are both too short.
  EXPECT_TRUE(tips_of_rule(elementwise_chain(6, 2), "unfused_chain").empty());
  EXPECT_EQ(tips_of_rule(elementwise_chain(6, 1), "unfused_chain").size(), 1u);  // n2-n5 is long
}

Profile tiny_nodes(std::size_t count, std::int64_t node_ns) {
  std::vector<NodeRecord> nodes;
  const TensorRecord f32 = tensor("float32", {1});
  for (std::size_t i = 0; i < count; ++i) {
    NodeRecord n = node("n" + std::to_string(i), "Add", "cpu", {f32}, {f32});
    n.total_ns = node_ns * 10;
    nodes.push_back(n);
  }
  Profile profile = one_function(nodes);
  profile.functions[0].vm_ns *= 2;  // as much time between kernels as in them
  return profile;
}

TEST(Tips, DispatchBoundFiresOnManyTinyNodes) {
  const auto tips = tips_of_rule(tiny_nodes(200, 100), "dispatch_bound");
  ASSERT_EQ(tips.size(), 1u);
  EXPECT_NE(tips[0].text.find("Function 'f' runs 200 nodes per call averaging 100 ns each"),
            std::string::npos)
      << tips[0].text;
}

TEST(Tips, DispatchBoundQuietOnFewOrLargeNodes) {
  EXPECT_TRUE(tips_of_rule(tiny_nodes(20, 100), "dispatch_bound").empty());
  EXPECT_TRUE(tips_of_rule(tiny_nodes(200, 50'000), "dispatch_bound").empty());
}

TEST(Tips, ManySignaturesFires) {
  const TensorRecord f32 = tensor("float32", {8});
  NodeRecord n = node("add(x, y)", "Add", "cpu", {f32, f32}, {f32});
  n.signatures.resize(5);
  const auto tips = tips_of_rule(one_function({n}), "many_signatures");
  ASSERT_EQ(tips.size(), 1u);
  EXPECT_NE(tips[0].text.find("add(x, y) was called with 5 distinct input shapes"),
            std::string::npos);
  n.signatures.resize(2);
  EXPECT_TRUE(tips_of_rule(one_function({n}), "many_signatures").empty());
}

// An (8, 4096, 12, 3) float32 broadcasting sub: 3 x 4.7 MB moved per call, 1.2 Mflop.
NodeRecord slow_sub(std::int64_t ns_per_call) {
  const TensorRecord big = tensor("float32", {8, 4096, 12, 3});
  NodeRecord n = node("Elemwise{sub,no_inplace}(a, b)", "Sub", "cpu", {big, big}, {big});
  n.source_site = "model.cpp:12";
  n.bytes_per_call = 3 * 4'718'592.0;
  n.flops_per_call = 1'179'648.0;
  n.total_ns = ns_per_call * n.call_count;
  return n;
}

Profile with_roof(Profile profile, double bytes_per_second, double flops_per_second) {
  profile.roof_bytes_per_second = bytes_per_second;
  profile.roof_flops_per_second = flops_per_second;
  return profile;
}

TEST(Tips, FarFromRoofNamesTheNodeItsRatesAndTheRoof) {
  // 11.5 ms per call for 14.2 MB: 1.23 GB/s against a 12 GB/s roof of 1.18 ms per call.
  const Profile profile = with_roof(one_function({slow_sub(11'500'000)}), 12e9, 50e9);
  const auto tips = tips_of_rule(profile, "far_from_roof");
  ASSERT_EQ(tips.size(), 1u);
  const std::string& text = tips[0].text;
  EXPECT_NE(text.find("Elemwise{sub,no_inplace}(a, b) (created at model.cpp:12) moves 14.16 MB"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("1.23 GB/s"), std::string::npos) << text;
  EXPECT_NE(text.find("12.0 GB/s and 50.0 Gflop/s"), std::string::npos) << text;
  EXPECT_NE(text.find("1.180e-03s per call (memory-bound), 10x faster"), std::string::npos)
      << text;
  // Gain: (11.5 - 1.18) ms on each of 10 calls.
  EXPECT_NE(text.find("est. gain up to 1.032e-01s"), std::string::npos) << text;
}

TEST(Tips, FarFromRoofQuietNearTheRoofOrWithoutOne) {
  // 2 ms per call is within 4x of the 1.18 ms roof.
  EXPECT_TRUE(
      tips_of_rule(with_roof(one_function({slow_sub(2'000'000)}), 12e9, 50e9), "far_from_roof")
          .empty());
  // No measured roof (a profile from a run with an injected clock).
  EXPECT_TRUE(tips_of_rule(one_function({slow_sub(11'500'000)}), "far_from_roof").empty());
  // A node with under 5% of the function's node time.
  NodeRecord big = slow_sub(11'500'000);
  NodeRecord other = slow_sub(11'500'000);
  other.total_ns = big.total_ns * 30;
  other.bytes_per_call = -1;  // no cost rule
  EXPECT_TRUE(
      tips_of_rule(with_roof(one_function({big, other}), 12e9, 50e9), "far_from_roof").empty());
}

}  // namespace
}  // namespace tscope::profile
