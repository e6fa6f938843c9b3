// SPDX-License-Identifier: Apache-2.0
// Tip rules. Thresholds are named constants; each rule has a test that fires it and one that keeps
// it quiet (tests/unit/profile/tips_test.cpp).
#include "tscope/profile/tips.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>

#include "tips_fusion.h"
#include "tips_loops.h"

namespace tscope::profile {
namespace {

constexpr std::size_t kManySignatures = 4;       // distinct input signatures of one node
constexpr double kDispatchBoundNodeNs = 1000.0;  // mean kernel time per node execution
constexpr std::int64_t kDispatchBoundMinExecutions = 100;
// A strided gather into a contiguous buffer touches a new cache line for nearly every element, so
// it moves memory at a fraction of streaming speed; the tip's estimate assumes this rate, each
// copied byte read once and written once.
constexpr double kStridedCopyBytesPerSecond = 2e9;
// The roofline tip looks at nodes, and the unfused-chain tip at groups of nodes, holding at least
// this share of their function's node time; the roofline tip fires when a call takes this many
// times longer than the machine's roof allows.
constexpr double kMinShare = 0.05;
constexpr double kFarFromRoofFactor = 4.0;
constexpr std::size_t kRoofTipsPerFunction = 5;

double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

std::string node_label(const NodeRecord& node) {
  std::string label = node.apply_name;
  if (!node.source_site.empty()) label += " (created at " + node.source_site + ")";
  return label;
}

// Constant data, not a container: the tips run from the exit-time writer, after static objects
// constructed later than its registration are already destroyed.
constexpr std::array<std::string_view, 26> kTranscendentalOps = {
    "Exp",  "Exp2", "Expm1", "Log",  "Log2",  "Log10", "Log1p",      "Sin",      "Cos",
    "Tan",  "Tanh", "Sinh",  "Cosh", "Pow",   "Sqrt",  "Sigmoid",    "Softplus", "Erf",
    "Erfc", "Atan", "Asin",  "Acos", "Rsqrt", "Cbrt",  "LogSigmoid", "Gelu"};

bool is_transcendental(std::string_view op_kind) {
  return std::find(kTranscendentalOps.begin(), kTranscendentalOps.end(), op_kind) !=
         kTranscendentalOps.end();
}

bool is_dot(const NodeRecord& node) {
  return node.op_kind == "Dot" || node.op_kind == "Dot22" || node.op_kind == "Gemm" ||
         node.op_kind == "MatMul";
}

void float64_tips(const FunctionRecord& function, std::vector<Tip>& tips) {
  for (const NodeRecord& node : function.nodes) {
    bool float64 = false;
    for (const TensorRecord& tensor : node.outputs) float64 = float64 || tensor.dtype == "float64";
    for (const TensorRecord& tensor : node.inputs) float64 = float64 || tensor.dtype == "float64";
    if (!float64 || node.call_count == 0) continue;
    tips.push_back(
        {"float64",
         fmt::format("{} computes in float64. If float32 precision is enough, build the "
                     "graph in float32: it halves the memory traffic (est. gain up to "
                     "{:.3e}s, half of its {:.3e}s).",
                     node_label(node), seconds(node.total_ns) / 2, seconds(node.total_ns))});
  }
}

void ref_kernel_tips(const FunctionRecord& function, std::vector<Tip>& tips) {
  for (const NodeRecord& node : function.nodes) {
    if (node.impl != "ref" || !node.fast_impl_available || node.call_count == 0) continue;
    tips.push_back(
        {"ref_kernel", fmt::format("{} ran the reference kernel although op {} has a fast one; "
                                   "compile without reference_kernels (est. gain: most of its "
                                   "{:.3e}s).",
                                   node_label(node), node.op_kind, seconds(node.total_ns))});
  }
}

void dot_tips(const FunctionRecord& function, std::vector<Tip>& tips) {
  for (const NodeRecord& node : function.nodes) {
    if (!is_dot(node) || node.call_count == 0 || node.inputs.size() < 2) continue;
    const TensorRecord& a = node.inputs[0];
    const TensorRecord& b = node.inputs[1];
    if (a.dtype != b.dtype) {
      tips.push_back({"dot_mixed_dtypes",
                      fmt::format("{} multiplies {} by {}: mixed dtypes cannot use BLAS. Cast both "
                                  "inputs to one float dtype (est. gain up to {:.3e}s).",
                                  node_label(node), a.dtype, b.dtype, seconds(node.total_ns))});
    } else if (a.shape.size() == 2 && b.shape.size() == 2 && node.impl != "blas" &&
               node.impl != "dnnl") {
      tips.push_back({"dot_not_blas",
                      fmt::format("{} is a generic Dot of two 2-D inputs ({} {} x {} {}) that did "
                                  "not run on BLAS (impl {}); BLAS needs float32 or float64 inputs "
                                  "of one dtype (est. gain: most of its {:.3e}s).",
                                  node_label(node), a.dtype, fmt::join(a.shape, "x"), b.dtype,
                                  fmt::join(b.shape, "x"), node.impl, seconds(node.total_ns))});
    }
  }
}

std::string describe_strided_inputs(const NodeRecord& node) {
  std::string text;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    const TensorRecord& input = node.inputs[i];
    if (input.contiguous) continue;
    text +=
        fmt::format("{}input {} ({} {}, strides {} B)", text.empty() ? "" : ", ", i, input.dtype,
                    fmt::join(input.shape, "x"), fmt::join(input.strides_bytes, ", "));
  }
  return text;
}

void blas_copy_tips(const FunctionRecord& function, std::vector<Tip>& tips) {
  for (const NodeRecord& node : function.nodes) {
    if (node.copied_input_bytes <= 0 || node.call_count == 0) continue;
    const double calls = static_cast<double>(node.call_count);
    const double copy_s =
        2.0 * static_cast<double>(node.copied_input_bytes) / kStridedCopyBytesPerSecond;
    const std::string strided = describe_strided_inputs(node);
    tips.push_back(
        {"blas_input_copy",
         fmt::format("{} copied {:.3g} input(s) per call ({:.0f} B per call) to a contiguous "
                     "buffer because their strides fit no BLAS layout{}. Produce the input "
                     "contiguous, or as a plain transpose, which BLAS reads in place (est. gain "
                     "{:.3e}s of its {:.3e}s).",
                     node_label(node), static_cast<double>(node.copied_input_count) / calls,
                     static_cast<double>(node.copied_input_bytes) / calls,
                     strided.empty() ? "" : " (last call: " + strided + ")",
                     std::min(copy_s, seconds(node.total_ns)), seconds(node.total_ns))});
  }
}

void transcendental_tips(const FunctionRecord& function, std::vector<Tip>& tips) {
  for (const NodeRecord& node : function.nodes) {
    if (!node.elementwise || !is_transcendental(node.op_kind) || node.impl == "simd" ||
        node.call_count == 0) {
      continue;
    }
    tips.push_back(
        {"transcendental_not_simd",
         fmt::format("{} evaluates {} elementwise on the '{}' path, not a vectorised "
                     "(simd) one; a vector math library is typically 2-4x faster (est. "
                     "gain up to {:.3e}s).",
                     node_label(node), node.op_kind, node.impl, seconds(node.total_ns) * 0.5)});
  }
}

std::string bytes_text(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes * 1e-9);
  if (bytes >= 1e6) return fmt::format("{:.2f} MB", bytes * 1e-6);
  if (bytes >= 1e3) return fmt::format("{:.2f} KB", bytes * 1e-3);
  return fmt::format("{:.0f} B", bytes);
}

// Nodes far below both this machine's memory bandwidth and its arithmetic rate: the roof says how
// fast the bytes and flops of a call could go; what is left is strided or broadcast access, a
// reference kernel, or per-call overhead.
void roofline_tips(const Profile& profile, const FunctionRecord& function,
                   std::vector<Tip>& tips) {
  const double bandwidth = profile.roof_bytes_per_second;
  const double flop_rate = profile.roof_flops_per_second;
  if (bandwidth <= 0 || flop_rate <= 0) return;
  std::int64_t function_ns = 0;
  for (const NodeRecord& node : function.nodes) function_ns += node.total_ns;
  if (function_ns <= 0) return;
  struct Candidate {
    const NodeRecord* node;
    double call_seconds;
    double roof_seconds;
  };
  std::vector<Candidate> candidates;
  for (const NodeRecord& node : function.nodes) {
    if (node.call_count <= 0 || node.bytes_per_call <= 0 || node.flops_per_call < 0) continue;
    const double share = static_cast<double>(node.total_ns) / static_cast<double>(function_ns);
    if (share < kMinShare) continue;
    const double call_seconds = seconds(node.total_ns) / static_cast<double>(node.call_count);
    const double roof_seconds =
        std::max(node.bytes_per_call / bandwidth, node.flops_per_call / flop_rate);
    if (call_seconds >= kFarFromRoofFactor * roof_seconds) {
      candidates.push_back({&node, call_seconds, roof_seconds});
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    return a.node->total_ns > b.node->total_ns;
  });
  if (candidates.size() > kRoofTipsPerFunction) candidates.resize(kRoofTipsPerFunction);
  for (const Candidate& candidate : candidates) {
    const NodeRecord& node = *candidate.node;
    const bool memory_bound = node.bytes_per_call / bandwidth >= node.flops_per_call / flop_rate;
    tips.push_back(
        {"far_from_roof",
         fmt::format("{} moves {} and computes {:.3g} Mflop per call in {:.3e}s: {:.2f} GB/s and "
                     "{:.2f} Gflop/s, where this machine measured {:.1f} GB/s and {:.1f} Gflop/s "
                     "on one thread. Its roof is {:.3e}s per call ({}-bound), {:.0f}x faster; "
                     "strided or broadcast operands, a reference kernel or per-call overhead "
                     "keep it away (est. gain up to {:.3e}s).",
                     node_label(node), bytes_text(node.bytes_per_call), node.flops_per_call * 1e-6,
                     candidate.call_seconds, node.bytes_per_call / candidate.call_seconds * 1e-9,
                     node.flops_per_call / candidate.call_seconds * 1e-9, bandwidth * 1e-9,
                     flop_rate * 1e-9, candidate.roof_seconds, memory_bound ? "memory" : "compute",
                     candidate.call_seconds / candidate.roof_seconds,
                     (candidate.call_seconds - candidate.roof_seconds) *
                         static_cast<double>(node.call_count))});
  }
}

void dispatch_tips(const FunctionRecord& function,
                   double overhead_ns_per_node,
                   std::vector<Tip>& tips) {
  std::int64_t executions = 0, kernel_ns = 0;
  for (const NodeRecord& node : function.nodes) {
    executions += node.call_count;
    kernel_ns += node.total_ns;
  }
  if (function.call_count == 0 || executions / function.call_count < kDispatchBoundMinExecutions) {
    return;
  }
  const double mean_ns = static_cast<double>(kernel_ns) / static_cast<double>(executions);
  if (mean_ns >= kDispatchBoundNodeNs) return;
  double dispatch_ns = static_cast<double>(std::max<std::int64_t>(function.vm_ns - kernel_ns, 0));
  if (overhead_ns_per_node > 0) {
    dispatch_ns =
        std::max(0.0, dispatch_ns - overhead_ns_per_node * static_cast<double>(executions));
  }
  tips.push_back(
      {"dispatch_bound",
       fmt::format("Function '{}' runs {} nodes per call averaging {:.0f} ns each: "
                   "per-node dispatch, allocation and bookkeeping weigh as much as the "
                   "work. Batch inputs or use fewer, larger operations (est. gain: up to "
                   "{:.3e}s of VM time outside kernels).",
                   function.name, executions / function.call_count, mean_ns, dispatch_ns * 1e-9)});
}

void signature_tips(const FunctionRecord& function, std::vector<Tip>& tips) {
  for (const NodeRecord& node : function.nodes) {
    if (node.signatures.size() < kManySignatures) continue;
    tips.push_back({"many_signatures",
                    fmt::format("{} was called with {} distinct input shapes/strides over {} "
                                "calls; each new signature can reallocate output buffers and "
                                "defeats buffer reuse. Pad or bucket the shapes (est. gain: the "
                                "reallocations in {:.3e}s).",
                                node_label(node), node.signatures.size(), node.call_count,
                                seconds(node.total_ns))});
  }
}

}  // namespace

std::vector<Tip> collect_tips(const Profile& profile) {
  std::vector<Tip> tips;
  for (const FunctionRecord& function : profile.functions) float64_tips(function, tips);
  for (const FunctionRecord& function : profile.functions) ref_kernel_tips(function, tips);
  for (const FunctionRecord& function : profile.functions) dot_tips(function, tips);
  for (const FunctionRecord& function : profile.functions) blas_copy_tips(function, tips);
  for (const FunctionRecord& function : profile.functions) transcendental_tips(function, tips);
  for (const FunctionRecord& function : profile.functions) {
    detail::unfused_chain_tips(function, profile.roof_bytes_per_second, kMinShare, tips);
  }
  for (const FunctionRecord& function : profile.functions) roofline_tips(profile, function, tips);
  for (const FunctionRecord& function : profile.functions) {
    dispatch_tips(function, profile.overhead_ns_per_node, tips);
  }
  for (const FunctionRecord& function : profile.functions) signature_tips(function, tips);
  for (const FunctionRecord& function : profile.functions) detail::loop_tips(function, tips);
  return tips;
}

std::string render_tips(const Profile& profile) {
  std::string out =
      "Here are tips to potentially make your code run faster\n"
      "                 (if you think of new ones, suggest them on the issue tracker).\n"
      "                 Test them first, as they are not guaranteed to always provide a speedup.\n";
  const std::vector<Tip> tips = collect_tips(profile);
  for (const Tip& tip : tips) out += "  - " + tip.text + "\n";
  if (tips.empty()) out += "Sorry, no tip for today.\n";
  return out;
}

}  // namespace tscope::profile
