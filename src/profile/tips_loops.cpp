// SPDX-License-Identifier: Apache-2.0
#include "tips_loops.h"

#include <fmt/format.h>

#include <algorithm>

namespace tscope::profile::detail {
namespace {

// A loop whose time outside its body's kernels (binding rows, copying outputs, the VM's per-node
// dispatch) reaches this share of its time is dominated by overhead, not work.
constexpr double kLoopOverheadShare = 0.3;
constexpr std::int64_t kLoopMinSteps = 10;
constexpr std::size_t kNamedInvariantNodes = 3;

double per(std::int64_t total, std::int64_t count) {
  return count > 0 ? static_cast<double>(total) / static_cast<double>(count) : 0.0;
}

void overhead_tip(const LoopRecord& loop, std::vector<Tip>& tips) {
  std::int64_t kernel_ns = 0;
  std::int64_t executions = 0;
  for (const NodeRecord& node : loop.body.nodes) {
    kernel_ns += node.total_ns;
    executions += node.call_count;
  }
  const std::int64_t outside_ns = loop.call_ns - kernel_ns;
  const double share = per(outside_ns, loop.call_ns);
  if (loop.step_count < kLoopMinSteps || share < kLoopOverheadShare) return;
  const std::int64_t dispatch_ns = std::max<std::int64_t>(0, loop.vm_ns - kernel_ns);
  tips.push_back(
      {"loop_overhead",
       fmt::format("Scan{{{}}}: {:.0f}% of the loop's {:.3g}s is spent outside its body's kernels "
                   "over {} steps ({:.0f} ns per step: binding rows {:.0f}, copying outputs "
                   "{:.0f}, the VM's dispatch of {:.1f} nodes per step {:.0f}; the nodes "
                   "themselves average {:.0f} ns). Each step does too little work for its "
                   "overhead: compute what needs no previous step before the loop (one product "
                   "over all steps instead of one per step), or use a dedicated op "
                   "(Lstm, Gru, Rnn) for a recurrent layer.",
                   loop.name, 100.0 * share, static_cast<double>(loop.call_ns) * 1e-9,
                   loop.step_count, per(outside_ns, loop.step_count),
                   per(loop.bind_ns, loop.step_count), per(loop.store_ns, loop.step_count),
                   per(executions, loop.step_count), per(dispatch_ns, loop.step_count),
                   per(kernel_ns, executions))});
}

void invariant_tip(const LoopRecord& loop, std::vector<Tip>& tips) {
  if (loop.invariant_nodes.empty()) return;
  std::int64_t total_ns = 0;
  std::vector<std::string> named;
  for (const std::int64_t index : loop.invariant_nodes) {
    const auto found =
        std::find_if(loop.body.nodes.begin(), loop.body.nodes.end(),
                     [index](const NodeRecord& node) { return node.topo_index == index; });
    if (found == loop.body.nodes.end()) continue;
    total_ns += found->total_ns;
    if (named.size() < kNamedInvariantNodes) {
      named.push_back(
          found->source_site.empty()
              ? found->apply_name
              : fmt::format("{} (created at {})", found->apply_name, found->source_site));
    }
  }
  std::string list;
  for (const std::string& name : named) list += (list.empty() ? "" : "; ") + name;
  if (loop.invariant_nodes.size() > named.size()) {
    list += fmt::format("; and {} more", loop.invariant_nodes.size() - named.size());
  }
  tips.push_back(
      {"loop_invariant",
       fmt::format("Scan{{{}}}: {} body node(s) read only values fixed for the whole loop "
                   "(non-sequences and constants), so they give the same result at every one "
                   "of the {} steps ({:.3g}s in all): {}. The rewrite hoist_loop_invariants "
                   "computes them once, before the loop; it did not run (is it in "
                   "excluded_rewrites?).",
                   loop.name, loop.invariant_nodes.size(), loop.step_count,
                   static_cast<double>(total_ns) * 1e-9, list)});
}

}  // namespace

void loop_tips(const FunctionRecord& function, std::vector<Tip>& tips) {
  for (const LoopRecord& loop : function.loops) {
    overhead_tip(loop, tips);
    invariant_tip(loop, tips);
  }
}

}  // namespace tscope::profile::detail
