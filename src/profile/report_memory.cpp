// SPDX-License-Identifier: Apache-2.0
// The "Memory Profile" section in the reference's layout, plus the allocator's measured peak next
// to the simulated one.
#include <fmt/format.h>
#include <fmt/printf.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tscope/profile/memory_model.h"

namespace tscope::profile {
namespace {

std::int64_t kilobytes(std::int64_t bytes) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(bytes) / 1024.0));
}

struct Peaks {
  MemoryRun executed, topological, executed_no_inplace, topological_no_inplace;
  std::int64_t measured_peak_bytes = 0;
  std::int64_t input_bytes = 0;
};

// Each statistic is the max over the profile's functions.
Peaks max_peaks(const Profile& profile) {
  Peaks peaks;
  auto merge = [](MemoryRun& into, const MemoryRun& run) {
    into.peak_bytes = std::max(into.peak_bytes, run.peak_bytes);
    into.total_allocated_bytes = std::max(into.total_allocated_bytes, run.total_allocated_bytes);
    into.saved_by_inplace_bytes = std::max(into.saved_by_inplace_bytes, run.saved_by_inplace_bytes);
    into.saved_by_view_bytes = std::max(into.saved_by_view_bytes, run.saved_by_view_bytes);
  };
  for (const FunctionRecord& function : profile.functions) {
    const std::vector<std::size_t> executed = executed_order(function);
    const std::vector<std::size_t> topological = topological_order(function);
    merge(peaks.executed, simulate_memory(function, executed, true));
    merge(peaks.topological, simulate_memory(function, topological, true));
    merge(peaks.executed_no_inplace, simulate_memory(function, executed, false));
    merge(peaks.topological_no_inplace, simulate_memory(function, topological, false));
    peaks.measured_peak_bytes = std::max(peaks.measured_peak_bytes, function.measured_peak_bytes);
    peaks.input_bytes = std::max(peaks.input_bytes, function.input_bytes);
  }
  return peaks;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i)
    text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) text += ",";
  return text + ")";
}

// The minimum over valid node orders, when searched (profiling.min_peak_memory): the max over
// functions, with the summed search time, as in the reference.
void render_min_peak(const Profile& profile, std::string& out) {
  MinPeakRecord total;
  std::size_t searched = 0;
  bool exact = true;
  std::vector<std::string> reasons;
  for (const FunctionRecord& function : profile.functions) {
    const MinPeakRecord& min_peak = function.min_peak;
    if (!min_peak.searched) continue;
    ++searched;
    exact = exact && min_peak.exact;
    total.peak_bytes = std::max(total.peak_bytes, min_peak.peak_bytes);
    total.lower_bound_bytes = std::max(total.lower_bound_bytes, min_peak.lower_bound_bytes);
    total.search_ns += min_peak.search_ns;
    if (!min_peak.exact &&
        std::find(reasons.begin(), reasons.end(), min_peak.stop_reason) == reasons.end()) {
      reasons.push_back(min_peak.stop_reason);
    }
  }
  if (searched == 0) return;
  const double search_s = static_cast<double>(total.search_ns) * 1e-9;
  if (exact) {
    out += fmt::format(
        "    Minimum peak from all valid apply node order is {}KB (took {:.3f}s to compute) "
        "[exact]\n",
        kilobytes(total.peak_bytes), search_s);
  } else {
    std::string why;
    for (const std::string& reason : reasons) why += (why.empty() ? "" : "; ") + reason;
    out += fmt::format(
        "    Minimum peak from all valid apply node order is between {}KB and {}KB (took {:.3f}s "
        "to compute) [bound: {}]\n",
        kilobytes(total.lower_bound_bytes), kilobytes(total.peak_bytes), search_s, why);
    out +=
        "        (upper: the best valid order found; lower: the most bytes one node needs live "
        "at once)\n";
  }
  if (searched < profile.functions.size()) {
    out +=
        fmt::format("        ({} of {} functions searched)\n", searched, profile.functions.size());
  }
  out += "---\n";
}

}  // namespace

std::string render_memory_section(const Profile& profile, const MemoryReportOptions& options) {
  std::string out;
  const Peaks peaks = max_peaks(profile);
  out += profile.functions.size() > 1
             ? "Memory Profile (the max between all functions in that profile)\n"
             : "Memory Profile\n";
  out +=
      "(Values in brackets: nodes in topological (breadth-first) order instead of executed "
      "order)\n";
  out += "---\n";
  out += "    Max peak memory with current setting\n";
  out += fmt::format("        CPU: {}KB ({}KB)\n", kilobytes(peaks.executed.peak_bytes),
                     kilobytes(peaks.topological.peak_bytes));
  out += "    Max peak memory with current setting and inplace operations disabled\n";
  out += fmt::format("        CPU: {}KB ({}KB)\n", kilobytes(peaks.executed_no_inplace.peak_bytes),
                     kilobytes(peaks.topological_no_inplace.peak_bytes));
  out += "    Max peak memory if allow_gc=False (node order makes no difference)\n";
  out += fmt::format("        CPU: {}KB\n", kilobytes(peaks.executed.total_allocated_bytes));
  out += fmt::format("    Memory saved by GC: {}KB, by views: {}KB, by inplace: {}KB\n",
                     kilobytes(peaks.executed.total_allocated_bytes - peaks.executed.peak_bytes),
                     kilobytes(peaks.executed.saved_by_view_bytes),
                     kilobytes(peaks.executed.saved_by_inplace_bytes));
  // The measured peak counts bytes allocated during calls above those live when the call began,
  // so graph inputs and shared values (allocated by the caller) are in neither figure.
  out += fmt::format(
      "    Measured allocator peak during calls: {}KB (simulated {}KB, difference {}KB: "
      "kernel workspaces, buffers kept for reuse (between calls, or within one under "
      "allow_gc), allocation rounding)\n",
      kilobytes(peaks.measured_peak_bytes), kilobytes(peaks.executed.peak_bytes),
      kilobytes(peaks.measured_peak_bytes - peaks.executed.peak_bytes));
  out += fmt::format("    Graph inputs and shared values (not in either figure): {}KB\n",
                     kilobytes(peaks.input_bytes));
  out += "---\n";
  render_min_peak(profile, out);
  out += "\n";

  struct Row {
    const NodeRecord* node;
    std::int64_t bytes;
  };
  std::vector<Row> rows;
  std::int64_t total_bytes = 0;
  for (const FunctionRecord& function : profile.functions) {
    for (const NodeRecord& node : function.nodes) {
      std::int64_t bytes = 0;
      for (const TensorRecord& output : node.outputs) bytes += tensor_bytes(output);
      rows.push_back({&node, bytes});
      total_bytes += bytes;
    }
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.bytes > b.bytes; });
  if (profile.functions.size() > 1)
    out += "    This list is based on all functions in the profile\n";
  out +=
      "    <Sum apply outputs (bytes)> <Apply outputs shape> <created/inplace/view> <Apply "
      "node>\n\n";
  std::size_t shown = std::min(rows.size(), static_cast<std::size_t>(std::max(options.n_apply, 0)));
  for (std::size_t i = 0; i < shown; ++i) {
    if (rows[i].bytes < options.min_memory_size) {
      shown = i;
      break;
    }
    const NodeRecord& node = *rows[i].node;
    std::string shapes = "[";
    for (std::size_t k = 0; k < node.outputs.size(); ++k) {
      shapes += (k > 0 ? ", " : "") + shape_text(node.outputs[k].shape);
    }
    shapes += "]";
    std::string codes;
    for (std::size_t k = 0; k < node.output_alias.size(); ++k)
      codes += (k > 0 ? " " : "") + node.output_alias[k];
    out += fmt::sprintf("     %9dB  %s %s %s\n", rows[i].bytes, shapes, codes, node.apply_name);
  }
  if (shown == 0) {
    out += fmt::format("   All Apply nodes have output sizes that take less than {}B.\n",
                       options.min_memory_size);
  } else if (shown < rows.size()) {
    std::int64_t rest_bytes = 0;
    for (std::size_t i = shown; i < rows.size(); ++i) rest_bytes += rows[i].bytes;
    out += fmt::sprintf(
        "   ... (remaining %d Apply account for %4dB/%dB (%.2f%%) of the Apply with dense outputs "
        "sizes)\n",
        rows.size() - shown, rest_bytes, total_bytes,
        total_bytes > 0 ? 100.0 * static_cast<double>(rest_bytes) / static_cast<double>(total_bytes)
                        : 0.0);
  }
  out += "\n";
  out += "    <created/inplace/view> is taken from the Op's declaration (views) and the node's "
         "in-place mark.\n";
  out +=
      "    Apply nodes marked 'inplace' or 'view' may actually allocate memory, this is not "
      "reported"
      " here.\n\n";
  return out;
}

}  // namespace tscope::profile
