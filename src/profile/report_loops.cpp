// SPDX-License-Identifier: Apache-2.0
// The loop sections of the text report: Theano's "Scan Op profiling" header, with its overhead
// split into its parts and the step times, then the body's own tables, tips and loops.
#include <fmt/format.h>
#include <fmt/printf.h>

#include <algorithm>

#include "report_text_sections.h"
#include "tscope/profile/tips.h"

namespace tscope::profile::detail {
namespace {

double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

std::string percent_of(std::int64_t part, std::int64_t whole) {
  if (whole <= 0) return "n/a";
  return fmt::sprintf("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string duration(std::int64_t ns) {
  if (ns < 10'000) return fmt::format("{}ns", ns);
  if (ns < 10'000'000) return fmt::sprintf("%.1fus", static_cast<double>(ns) * 1e-3);
  return fmt::sprintf("%.1fms", static_cast<double>(ns) * 1e-6);
}

void render_loop(const Profile& profile,
                 const LoopRecord& loop,
                 const std::string& number,
                 const std::string& parent,
                 const TextReportOptions& options,
                 std::string& out) {
  const std::string title = fmt::format("Scan Op profiling [{}] ( {} )", number, loop.name);
  out += "\n" + title + "\n" + std::string(title.size(), '=') + "\n";
  out += fmt::format("  Message: {}, node {} of {}\n", loop.name, loop.topo_index, parent);
  out += "  Node: " + loop.apply_name + "\n";
  out += fmt::sprintf("  Time in %d calls of the op (for a total of %d steps) %es\n",
                      loop.call_count, loop.step_count, seconds(loop.call_ns));
  if (loop.call_count > 0) {
    const std::int64_t overhead = loop.call_ns - loop.vm_ns;
    out += fmt::sprintf("  Total time spent in calling the VM %es (%s)\n", seconds(loop.vm_ns),
                        percent_of(loop.vm_ns, loop.call_ns));
    out += fmt::sprintf("  Total overhead (computing slices..) %es (%s)\n", seconds(overhead),
                        percent_of(overhead, loop.call_ns));
    out += fmt::sprintf("    Slicing sequences, binding the body's inputs: %es (%s)\n",
                        seconds(loop.bind_ns), percent_of(loop.bind_ns, loop.call_ns));
    out += fmt::sprintf("    Copying the body's outputs into the stacks: %es (%s)\n",
                        seconds(loop.store_ns), percent_of(loop.store_ns, loop.call_ns));
    out += fmt::sprintf("    Per call (checks, stacks, initial states): %es (%s)\n",
                        seconds(loop.setup_ns), percent_of(loop.setup_ns, loop.call_ns));
    if (loop.step_count > 0) {
      out += fmt::format("  Step time: first step {} (mean over {} calls)",
                         duration(loop.first_step_ns / loop.call_count), loop.call_count);
      if (loop.step_count > loop.call_count) {
        out += fmt::format("; later steps min {}, median {}, max {}", duration(loop.step_min_ns),
                           duration(loop.step_median_ns), duration(loop.step_max_ns));
      }
      out += "\n";
    }
  }
  out += fmt::format("  Body: {} Apply nodes, compiled in {:e}s (rewriting {:e}s, linking {:e}s)\n",
                     loop.body.compile.node_count, seconds(loop.body.compile.total_ns),
                     seconds(loop.body.compile.rewrite_ns), seconds(loop.body.compile.link_ns));
  out += "\n";

  Profile body;
  body.functions = {loop.body};
  body.functions[0].loops.clear();  // printed below, each as its own section
  body.overhead_ns_per_node = profile.overhead_ns_per_node;
  body.clock = profile.clock;
  body.clock_read_ns = profile.clock_read_ns;
  body.roof_bytes_per_second = profile.roof_bytes_per_second;
  body.roof_flops_per_second = profile.roof_flops_per_second;
  render_node_sections(body, options, out);
  if (options.show_tips) out += render_tips(body);
  for (std::size_t i = 0; i < loop.body.loops.size(); ++i) {
    render_loop(profile, loop.body.loops[i], fmt::format("{}.{}", number, i + 1),
                fmt::format("the body of [{}] {}", number, loop.name), options, out);
  }
}

void merge_into(FunctionRecord& into, const FunctionRecord& from);

// Adds `from` (the same loop node, recorded by another function object or process) into `into`.
// The merged median is the step-weighted mean of the two medians: the buckets behind them are
// not in the profile.
void merge_into(LoopRecord& into, const LoopRecord& from) {
  const std::int64_t into_later = into.step_count - into.call_count;
  const std::int64_t from_later = from.step_count - from.call_count;
  if (from_later > 0) {
    into.step_median_ns = (into.step_median_ns * into_later + from.step_median_ns * from_later) /
                          (into_later + from_later);
    into.step_min_ns =
        into_later > 0 ? std::min(into.step_min_ns, from.step_min_ns) : from.step_min_ns;
    into.step_max_ns = std::max(into.step_max_ns, from.step_max_ns);
  }
  into.call_count += from.call_count;
  into.step_count += from.step_count;
  into.call_ns += from.call_ns;
  into.vm_ns += from.vm_ns;
  into.bind_ns += from.bind_ns;
  into.store_ns += from.store_ns;
  into.setup_ns += from.setup_ns;
  into.first_step_ns += from.first_step_ns;
  merge_into(into.body, from.body);
}

void merge_into(FunctionRecord& into, const FunctionRecord& from) {
  into.call_count += from.call_count;
  into.call_ns += from.call_ns;
  into.vm_ns += from.vm_ns;
  for (const NodeRecord& node : from.nodes) {
    for (NodeRecord& mine : into.nodes) {
      if (mine.topo_index != node.topo_index || mine.apply_name != node.apply_name) continue;
      if (node.call_count > 0) {
        mine.min_ns = mine.call_count > 0 ? std::min(mine.min_ns, node.min_ns) : node.min_ns;
        mine.max_ns = std::max(mine.max_ns, node.max_ns);
      }
      mine.call_count += node.call_count;
      mine.total_ns += node.total_ns;
    }
  }
  for (const LoopRecord& loop : from.loops) {
    bool merged = false;
    for (LoopRecord& mine : into.loops) {
      if (mine.topo_index == loop.topo_index && mine.apply_name == loop.apply_name) {
        merge_into(mine, loop);
        merged = true;
      }
    }
    if (!merged) into.loops.push_back(loop);
  }
}

}  // namespace

std::string render_loop_sections(const Profile& profile, const TextReportOptions& options) {
  // Functions of one name (a profile merged from several runs) show each of their loops once,
  // with the runs' figures added up.
  std::vector<std::pair<std::string, std::vector<LoopRecord>>> by_function;
  for (const FunctionRecord& function : profile.functions) {
    if (function.loops.empty()) continue;
    auto found = std::find_if(by_function.begin(), by_function.end(),
                              [&](const auto& entry) { return entry.first == function.name; });
    if (found == by_function.end()) {
      by_function.emplace_back(function.name, function.loops);
      continue;
    }
    FunctionRecord gathered;
    gathered.loops = std::move(found->second);
    FunctionRecord other;
    other.loops = function.loops;
    merge_into(gathered, other);
    found->second = std::move(gathered.loops);
  }
  std::string out;
  int count = 0;
  for (const auto& [name, loops] : by_function) {
    for (const LoopRecord& loop : loops) {
      render_loop(profile, loop, std::to_string(++count), fmt::format("function '{}'", name),
                  options, out);
    }
  }
  return out;
}

}  // namespace tscope::profile::detail
