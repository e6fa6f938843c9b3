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

Profile with_roof(Profile profile, double bytes_per_second, double flops_per_second) {
  profile.roof_bytes_per_second = bytes_per_second;
  profile.roof_flops_per_second = flops_per_second;
  return profile;
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

// A node of a hand-built graph for the unfused_chain rule: reads the values `inputs`, writes the
// value `output` (4 KB per call) and has the fusion role the runtime would record. Composites and
// reductions are not elementwise ops; the other nodes are, unless a test says otherwise.
NodeRecord graph_node(const std::string& op,
                      std::string role,
                      std::vector<std::int64_t> inputs,
                      std::int64_t output,
                      const std::string& input_dtype = "float32",
                      const std::string& output_dtype = "float32") {
  const std::vector<TensorRecord> input_tensors(inputs.size(), tensor(input_dtype, {1024}));
  NodeRecord n = node(op + "(...)", op, "cpu", input_tensors, {tensor(output_dtype, {1024})});
  n.op_name = op;
  n.fusion_role = std::move(role);
  n.elementwise = n.fusion_role != "reduction" && op != "Composite";
  n.input_ids = std::move(inputs);
  n.output_ids = {output};
  n.output_bytes = 4096;
  return n;
}

// One function over input value 0 whose compile record says fuse_elementwise ran.
Profile fused_function(std::vector<NodeRecord> nodes, std::vector<std::int64_t> outputs) {
  Profile profile = one_function(std::move(nodes));
  profile.functions[0].input_ids = {0};
  profile.functions[0].output_ids = std::move(outputs);
  profile.functions[0].compile.rewrites = {{"merge_duplicate_nodes"}, {"fuse_elementwise"}};
  return profile;
}

std::string unfused_chain_text(const Profile& profile) {
  const auto tips = tips_of_rule(profile, "unfused_chain");
  EXPECT_EQ(tips.size(), 1u);
  return tips.empty() ? std::string() : tips[0].text;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The density chain of the voxel job: exp(...) read by two sums.
TEST(Tips, UnfusedChainNamesAValueReadByTwoLoops) {
  const std::string text = unfused_chain_text(fused_function(
      {graph_node("Composite", "elementwise", {0}, 1), graph_node("Sum", "reduction", {1}, 2),
       graph_node("Composite", "reduction", {1, 0}, 3)},
      {2, 3}));
  EXPECT_TRUE(
      contains(text,
               "3 nodes of an elementwise chain, from Composite (node 0) to Composite (node 2), "
               "ran as separate loops, 100.0% of function 'f' (3.000e-03s)"))
      << text;
  EXPECT_TRUE(contains(text,
                       "fusion stored 1 value between them: Composite (node 0) is read by 2 "
                       "nodes (Sum (node 1), Composite (node 2)): fused into each, its "
                       "1.000e-03s would be spent 2 times"))
      << text;
  // No bandwidth measured: the producer, cheaper than its two readers, bounds the gain.
  EXPECT_TRUE(contains(text,
                       "(est. gain up to 1.000e-03s if fused: the cheaper side of each "
                       "boundary)"))
      << text;
}

TEST(Tips, UnfusedChainSaysAValueReadOutsideLoopsIsStoredAnyway) {
  NodeRecord conv = graph_node("Conv3d", "none", {1}, 3);
  conv.elementwise = false;
  const std::string text =
      unfused_chain_text(fused_function({graph_node("Add", "elementwise", {0}, 1),
                                         graph_node("Maximum", "elementwise", {1}, 2), conv},
                                        {2, 3}));
  EXPECT_TRUE(
      contains(text, "2 nodes of an elementwise chain, from Add (node 0) to Maximum (node 1)"))
      << text;
  EXPECT_TRUE(contains(text,
                       "Add (node 0) is read by 2 nodes (Maximum (node 1), Conv3d (node 2)), "
                       "1 of them not elementwise, so it is stored anyway"))
      << text;
}

TEST(Tips, UnfusedChainSaysAFunctionOutputIsStored) {
  const std::string text = unfused_chain_text(fused_function(
      {graph_node("Composite", "elementwise", {0}, 1), graph_node("Add", "elementwise", {1, 0}, 2)},
      {1, 2}));
  EXPECT_TRUE(contains(text,
                       "Composite (node 0) is an output of the function, and a fused loop "
                       "returns only its last value"))
      << text;
}

// The ReLU mask of a gradient: ge(a, 0) is bool, cast back to float32 before the product.
TEST(Tips, UnfusedChainNamesEachDtypeChange) {
  const std::string text =
      unfused_chain_text(fused_function({graph_node("Add", "elementwise", {0}, 1),
                                         graph_node("Ge", "none", {1}, 2, "float32", "bool"),
                                         graph_node("Cast", "none", {2}, 3, "bool", "float32"),
                                         graph_node("Mul", "elementwise", {3, 0}, 4)},
                                        {4}));
  EXPECT_TRUE(contains(text, "fusion stored 3 values between them")) << text;
  EXPECT_TRUE(contains(text,
                       "Add (node 0) feeds Ge (node 1), which changes the dtype (float32 -> "
                       "bool), and a fused loop keeps one float dtype"))
      << text;
  EXPECT_TRUE(contains(text, "Ge (node 1) changes the dtype (float32 -> bool)")) << text;
  EXPECT_TRUE(contains(text, "Cast (node 2) changes the dtype (bool -> float32)")) << text;
}

TEST(Tips, UnfusedChainNamesANonFloatOp) {
  const std::string text =
      unfused_chain_text(fused_function({graph_node("Ge", "none", {0}, 1, "float32", "bool"),
                                         graph_node("Not", "none", {1}, 2, "bool", "bool")},
                                        {2}));
  EXPECT_TRUE(contains(text, "Ge (node 0) changes the dtype (float32 -> bool)")) << text;
  const std::string reader =
      unfused_chain_text(fused_function({graph_node("Not", "none", {0}, 1, "bool", "bool"),
                                         graph_node("Not", "none", {1}, 2, "bool", "bool")},
                                        {2}));
  EXPECT_TRUE(contains(reader,
                       "Not (node 0) computes in bool, and a fused loop computes in "
                       "float32 or float64"))
      << reader;
}

TEST(Tips, UnfusedChainNamesAnOpWithoutAFusedKernel) {
  const std::string text = unfused_chain_text(fused_function(
      {graph_node("Add", "elementwise", {0}, 1), graph_node("Erfcx", "none", {1}, 2)}, {2}));
  EXPECT_TRUE(contains(text,
                       "Add (node 0) feeds Erfcx (node 1), which has no fused kernel (op "
                       "Erfcx)"))
      << text;
}

TEST(Tips, UnfusedChainNamesTheExcludedRewrite) {
  Profile profile = fused_function(
      {graph_node("Add", "elementwise", {0}, 1), graph_node("Exp", "elementwise", {1}, 2)}, {2});
  profile.functions[0].compile.rewrites = {{"merge_duplicate_nodes"}};
  const std::string text = unfused_chain_text(profile);
  EXPECT_TRUE(contains(text,
                       "ran as separate loops, 100.0% of function 'f' (2.000e-03s); the "
                       "fuse_elementwise rewrite was excluded when the function was "
                       "compiled"))
      << text;
  // A profile without the rewrites' record says neither that fusion was excluded nor why it
  // left the two apart.
  profile.functions[0].compile.rewrites.clear();
  const std::string unknown = unfused_chain_text(profile);
  EXPECT_FALSE(contains(unknown, "excluded")) << unknown;
  EXPECT_TRUE(contains(unknown,
                       "Add (node 0) feeds Exp (node 1), and the profile does not record "
                       "the rewrites that ran"))
      << unknown;
}

TEST(Tips, UnfusedChainNamesFusionsBound) {
  const std::string text =
      unfused_chain_text(fused_function({graph_node("Composite", "elementwise", {0}, 1),
                                         graph_node("Composite", "elementwise", {1}, 2)},
                                        {2}));
  EXPECT_TRUE(contains(text,
                       "Composite (node 0) feeds Composite (node 1), a fused loop already "
                       "at fusion's bound on nodes"))
      << text;
}

TEST(Tips, UnfusedChainNamesAShapeMismatch) {
  const std::string text = unfused_chain_text(fused_function(
      {graph_node("Add", "elementwise", {0}, 1), graph_node("Exp", "elementwise", {1}, 2)}, {2}));
  EXPECT_TRUE(contains(text,
                       "Add (node 0) feeds Exp (node 1), and the fused node was dropped "
                       "because its inferred type differed from that node's (a shape "
                       "mismatch)"))
      << text;
}

TEST(Tips, UnfusedChainExplainsAtMostFourValues) {
  std::vector<NodeRecord> nodes;
  for (std::int64_t i = 0; i < 7; ++i)
    nodes.push_back(graph_node("Exp", "elementwise", {i}, i + 1));
  const std::string text = unfused_chain_text(fused_function(nodes, {7}));
  EXPECT_TRUE(contains(text, "7 nodes of an elementwise chain, from Exp (node 0) to Exp (node 6)"))
      << text;
  EXPECT_TRUE(contains(text, "fusion stored 6 values between them")) << text;
  EXPECT_TRUE(contains(text, "Exp (node 3) feeds Exp (node 4)")) << text;
  EXPECT_FALSE(contains(text, "Exp (node 4) feeds")) << text;
  EXPECT_TRUE(contains(text, "; and 2 more (est. gain")) << text;
}

TEST(Tips, UnfusedChainGainUsesTheMeasuredBandwidth) {
  const std::vector<NodeRecord> nodes = {graph_node("Add", "elementwise", {0}, 1),
                                         graph_node("Exp", "elementwise", {1}, 2)};
  // 4096 B written and read back on each of 10 calls, at 1 GB/s.
  const std::string text = unfused_chain_text(with_roof(fused_function(nodes, {2}), 1e9, 1e12));
  EXPECT_TRUE(contains(text,
                       "(est. gain up to 8.192e-05s if fused: the stored values' writes and "
                       "reads at the measured 1.0 GB/s)"))
      << text;
  // An output of the function is written anyway: only its read would go.
  const std::string kept = unfused_chain_text(with_roof(fused_function(nodes, {1, 2}), 1e9, 1e12));
  EXPECT_TRUE(contains(kept, "(est. gain up to 4.096e-05s if fused")) << kept;
}

TEST(Tips, UnfusedChainQuietOnAFusedGraph) {
  NodeRecord dot = graph_node("Dot", "none", {1}, 2);
  dot.elementwise = false;
  EXPECT_TRUE(
      tips_of_rule(fused_function({graph_node("Composite", "elementwise", {0}, 1), dot}, {2}),
                   "unfused_chain")
          .empty());
}

TEST(Tips, UnfusedChainQuietBelowItsShareOfTheFunction) {
  NodeRecord dot = graph_node("Dot", "none", {2}, 3);
  dot.elementwise = false;
  dot.total_ns = 39'000'000;  // the pair's 2 ms is 4.9% of the function's node time
  const std::vector<NodeRecord> small = {graph_node("Add", "elementwise", {0}, 1),
                                         graph_node("Exp", "elementwise", {1}, 2), dot};
  EXPECT_TRUE(tips_of_rule(fused_function(small, {3}), "unfused_chain").empty());
  std::vector<NodeRecord> large = small;
  large[2].total_ns = 37'000'000;  // 5.1%
  EXPECT_EQ(tips_of_rule(fused_function(large, {3}), "unfused_chain").size(), 1u);
}

TEST(Tips, UnfusedChainQuietOnProfilesWithoutFusionRoles) {
  std::vector<NodeRecord> nodes = {graph_node("Add", "elementwise", {0}, 1),
                                   graph_node("Exp", "elementwise", {1}, 2)};
  for (NodeRecord& n : nodes) n.fusion_role.clear();  // written before the field existed
  EXPECT_TRUE(tips_of_rule(fused_function(nodes, {2}), "unfused_chain").empty());
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
