// SPDX-License-Identifier: Apache-2.0
// The "Apply by input signature" section: which input shapes a node's time went to. Nodes in the
// Apply table's order (costliest first), each followed by its signatures, costliest first. Printed
// for nodes called with several signatures, or for every node with --by-signature.
#include <fmt/format.h>
#include <fmt/printf.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tscope/profile/report_text.h"

namespace tscope::profile {
namespace {

double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

std::string join_numbers(const std::vector<std::int64_t>& numbers) {
  std::string text = "(";
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    text += (i > 0 ? ", " : "") + std::to_string(numbers[i]);
  }
  if (numbers.size() == 1) text += ",";
  return text + ")";
}

// "float32 (32, 64), float32 (64, 16) strides (4, 256)B": strides only where not contiguous.
std::string describe_signature(const SignatureRecord& signature) {
  std::string text;
  for (const TensorRecord& input : signature.inputs) {
    if (!text.empty()) text += ", ";
    text +=
        (input.dtype.empty() ? std::string("none") : input.dtype) + " " + join_numbers(input.shape);
    if (!input.contiguous) text += " strides " + join_numbers(input.strides_bytes) + "B";
  }
  return text.empty() ? "(no inputs)" : text;
}

struct NodeEntry {
  const FunctionRecord* function;
  const NodeRecord* node;
};

}  // namespace

std::string render_signature_section(const Profile& profile,
                                     const TextReportOptions& options,
                                     bool all_nodes) {
  std::vector<NodeEntry> entries;
  for (const FunctionRecord& function : profile.functions) {
    for (const NodeRecord& node : function.nodes) {
      if (node.signatures.empty() || (!all_nodes && node.signatures.size() < 2)) continue;
      entries.push_back({&function, &node});
    }
  }
  if (entries.empty()) return "";
  std::stable_sort(entries.begin(), entries.end(), [](const NodeEntry& a, const NodeEntry& b) {
    if (a.node->total_ns != b.node->total_ns) return a.node->total_ns > b.node->total_ns;
    return a.node->topo_index > b.node->topo_index;
  });
  std::string out = all_nodes ? "Apply by input signature\n------------------------\n"
                              : "Apply by input signature (nodes called with several)\n"
                                "----------------------------------------------------\n";
  out += "    <% node time> <apply time> <time per call> <#call> <input signature>\n";
  const std::size_t shown =
      std::min(entries.size(), static_cast<std::size_t>(std::max(options.n_apply, 0)));
  const auto width = static_cast<std::size_t>(std::max(options.line_width, 0));
  for (std::size_t i = 0; i < shown; ++i) {
    const NodeRecord& node = *entries[i].node;
    std::string title = profile.functions.size() > 1 ? entries[i].function->name + ", " : "";
    title += fmt::format("node {}: {} ({} calls, {} signature{})", node.topo_index, node.apply_name,
                         node.call_count, node.signatures.size(),
                         node.signatures.size() == 1 ? "" : "s");
    out += "  " + title.substr(0, width > 2 ? width - 2 : 0) + "\n";
    std::vector<const SignatureRecord*> signatures;
    for (const SignatureRecord& signature : node.signatures) signatures.push_back(&signature);
    std::stable_sort(signatures.begin(), signatures.end(),
                     [](const SignatureRecord* a, const SignatureRecord* b) {
                       return a->total_ns > b->total_ns;
                     });
    for (const SignatureRecord* signature : signatures) {
      const double percent = node.total_ns > 0 ? 100.0 * static_cast<double>(signature->total_ns) /
                                                     static_cast<double>(node.total_ns)
                                               : 0.0;
      const double per_call =
          signature->timed_call_count > 0
              ? seconds(signature->total_ns) / static_cast<double>(signature->timed_call_count)
              : 0.0;
      out += fmt::sprintf("    %12.1f%% %11.3es %14.2es %7d %s\n", percent,
                          seconds(signature->total_ns), per_call, signature->timed_call_count,
                          describe_signature(*signature));
    }
  }
  if (entries.size() > shown) {
    out += fmt::format("   ... (remaining {} Apply nodes not shown)\n", entries.size() - shown);
  }
  return out + "\n";
}

}  // namespace tscope::profile
