// SPDX-License-Identifier: Apache-2.0
#include "tscope/profile/repeated_runs.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "tscope/core/checked_math.h"
#include "tscope/core/error.h"

namespace tscope::profile {
namespace {

// A run's slowest calls and their count: its own merged figures, or its max_ns as one call.
std::pair<std::int64_t, std::int64_t> slowest_calls(const NodeRecord& node) {
  if (node.run_count > 0) return {node.run_slowest_ns, node.run_count};
  return node.call_count > 0 ? std::pair<std::int64_t, std::int64_t>{node.max_ns, 1}
                             : std::pair<std::int64_t, std::int64_t>{0, 0};
}

void merge_node(NodeRecord& into, const NodeRecord& node, const std::string& what) {
  const auto [into_slowest, into_runs] = slowest_calls(into);
  const auto [node_slowest, node_runs] = slowest_calls(node);
  into.run_slowest_ns = checked_add(into_slowest, node_slowest, what, ErrorKind::Parse);
  into.run_count = into_runs + node_runs;
  if (node.call_count > 0) {
    into.min_ns = into.call_count > 0 ? std::min(into.min_ns, node.min_ns) : node.min_ns;
    into.max_ns = std::max(into.max_ns, node.max_ns);
  }
  into.call_count = checked_add(into.call_count, node.call_count, what, ErrorKind::Parse);
  into.total_ns = checked_add(into.total_ns, node.total_ns, what, ErrorKind::Parse);
}

void merge_function(FunctionRecord& into,
                    const FunctionRecord& function,
                    const std::string& source,
                    const std::string& first_source) {
  const std::string what = source + ": function '" + function.name + "'";
  if (function.nodes.size() != into.nodes.size()) {
    throw_error(ErrorKind::InvalidArgument,
                "{} has {} nodes where {} has {}: repeated runs must be of one unchanged job", what,
                function.nodes.size(), first_source, into.nodes.size());
  }
  for (std::size_t i = 0; i < function.nodes.size(); ++i) {
    const NodeRecord& node = function.nodes[i];
    if (node.apply_name != into.nodes[i].apply_name) {
      throw_error(ErrorKind::InvalidArgument,
                  "{}: node {} is '{}' where {} has '{}': repeated runs must be of one unchanged "
                  "job",
                  what, i, node.apply_name, first_source, into.nodes[i].apply_name);
    }
    merge_node(into.nodes[i], node, what + ", node '" + node.apply_name + "'");
  }
  into.call_count = checked_add(into.call_count, function.call_count, what, ErrorKind::Parse);
  into.call_ns = checked_add(into.call_ns, function.call_ns, what, ErrorKind::Parse);
  into.vm_ns = checked_add(into.vm_ns, function.vm_ns, what, ErrorKind::Parse);
  into.measured_peak_bytes = std::max(into.measured_peak_bytes, function.measured_peak_bytes);
  into.input_bytes = std::max(into.input_bytes, function.input_bytes);
}

}  // namespace

Profile merge_repeated_runs(const std::vector<Profile>& runs,
                            const std::vector<std::string>& sources,
                            std::string title) {
  if (runs.empty()) throw_error(ErrorKind::InvalidArgument, "no runs to merge");
  if (sources.size() != runs.size()) {
    throw_error(ErrorKind::InvalidArgument, "{} runs but {} names for them", runs.size(),
                sources.size());
  }
  Profile merged = runs.front();
  merged.title = std::move(title);
  merged.functions.clear();
  // Where each function sits in `merged`, and the run it came from first (for errors).
  struct Held {
    std::size_t index;
    const std::string* source;
  };
  std::map<std::string, Held> held;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    std::set<std::string> seen;
    for (const FunctionRecord& function : runs[r].functions) {
      if (!seen.insert(function.name).second) {
        throw_error(ErrorKind::InvalidArgument,
                    "{} holds two functions named '{}': give each function its own name",
                    sources[r], function.name);
      }
      const auto [it, first] =
          held.try_emplace(function.name, Held{merged.functions.size(), &sources[r]});
      if (first) {
        merged.functions.push_back(function);
        continue;
      }
      merge_function(merged.functions[it->second.index], function, sources[r], *it->second.source);
    }
    merged.grad_ns = std::max(merged.grad_ns, runs[r].grad_ns);
  }
  return merged;
}

}  // namespace tscope::profile
