// SPDX-License-Identifier: Apache-2.0
// Folded stacks (report_folded.h). Zone sites of kind "function" are graph Function calls, named
// like the profile's FunctionRecords: that name is how the two trees are joined.
#include "tscope/profile/report_folded.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace tscope::profile {
namespace {

// A function's rows below its own frame: class, then node, with the node's total time.
struct FunctionRows {
  std::vector<FoldedStack> rows;  // frames relative to the function frame
  std::int64_t node_ns = 0;
  std::int64_t call_ns = 0;
};

// Rows of `function`'s nodes under `prefix`. A loop node's row holds its own overhead, with its
// body's rows below it (and so on, at any depth), so loops show nested in the flame graph.
void add_node_rows(const FunctionRecord& function,
                   const std::vector<std::string>& prefix,
                   std::vector<FoldedStack>& rows) {
  for (const NodeRecord& node : function.nodes) {
    std::vector<std::string> frames = prefix;
    frames.push_back(node.class_name);
    frames.push_back(node.apply_name);
    const LoopRecord* loop = nullptr;
    for (const LoopRecord& candidate : function.loops) {
      if (candidate.topo_index == node.topo_index) loop = &candidate;
    }
    if (loop == nullptr) {
      rows.push_back({std::move(frames), node.total_ns});
      continue;
    }
    std::int64_t body_ns = 0;
    for (const NodeRecord& inner : loop->body.nodes) body_ns += inner.total_ns;
    rows.push_back({frames, std::max<std::int64_t>(node.total_ns - body_ns, 0)});
    add_node_rows(loop->body, frames, rows);
  }
}

std::map<std::string, FunctionRows> rows_by_function(const Profile& profile) {
  std::map<std::string, FunctionRows> by_name;
  for (const FunctionRecord& function : profile.functions) {
    FunctionRows& rows = by_name[function.name];
    rows.call_ns += function.call_ns;
    add_node_rows(function, {}, rows.rows);
    for (const NodeRecord& node : function.nodes) rows.node_ns += node.total_ns;
  }
  return by_name;
}

std::int64_t scaled(std::int64_t ns, double share) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(ns) * share));
}

void add_stack(std::vector<FoldedStack>& out, std::vector<std::string> frames, std::int64_t ns) {
  if (ns > 0) out.push_back({std::move(frames), ns});
}

// Zone stacks, with graph function calls expanded into their nodes; returns the names of the
// functions placed under a zone.
std::set<std::string> add_zone_stacks(const Profile& profile,
                                      const std::map<std::string, FunctionRows>& functions,
                                      std::vector<FoldedStack>& out) {
  std::set<std::string> placed;
  if (profile.host.empty()) return placed;
  const HostRecord& host = profile.host;
  const ZoneThreadRecord tree = merge_zone_threads(host);
  // A function reached through several zone paths shares its node time among them.
  std::map<std::int64_t, std::int64_t> function_site_ns;
  for (const ZoneNodeRecord& node : tree.nodes) {
    if (host.sites[static_cast<std::size_t>(node.site)].kind == "function") {
      function_site_ns[node.site] += node.total_ns;
    }
  }
  std::vector<std::vector<std::string>> paths(tree.nodes.size());
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    const ZoneNodeRecord& node = tree.nodes[i];
    const ZoneSiteRecord& site = host.sites[static_cast<std::size_t>(node.site)];
    if (node.parent >= 0) paths[i] = paths[static_cast<std::size_t>(node.parent)];
    paths[i].push_back(site.name);
    std::int64_t self_ns = node.self_ns;
    const auto function = functions.find(site.name);
    if (site.kind == "function" && function != functions.end()) {
      placed.insert(site.name);
      const std::int64_t site_ns = function_site_ns[node.site];
      const double share =
          site_ns > 0 ? static_cast<double>(node.total_ns) / static_cast<double>(site_ns) : 0.0;
      for (const FoldedStack& row : function->second.rows) {
        std::vector<std::string> frames = paths[i];
        frames.insert(frames.end(), row.frames.begin(), row.frames.end());
        const std::int64_t ns = scaled(row.self_ns, share);
        add_stack(out, std::move(frames), ns);
        self_ns -= ns;
      }
    }
    add_stack(out, paths[i], std::max<std::int64_t>(self_ns, 0));
  }
  return placed;
}

std::string frame_text(const std::string& frame) {
  std::string text = frame;
  for (char& c : text) {
    if (c == ';') c = ',';
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

std::vector<FoldedStack> folded_stacks(const Profile& profile) {
  const std::map<std::string, FunctionRows> functions = rows_by_function(profile);
  std::vector<FoldedStack> out;
  const std::set<std::string> placed = add_zone_stacks(profile, functions, out);
  std::set<std::string> written;
  for (const FunctionRecord& record : profile.functions) {
    if (placed.count(record.name) != 0 || !written.insert(record.name).second) continue;
    const FunctionRows& rows = functions.at(record.name);
    add_stack(out, {record.name}, std::max<std::int64_t>(rows.call_ns - rows.node_ns, 0));
    for (const FoldedStack& row : rows.rows) {
      std::vector<std::string> frames = {record.name};
      frames.insert(frames.end(), row.frames.begin(), row.frames.end());
      add_stack(out, std::move(frames), row.self_ns);
    }
  }
  return out;
}

std::string render_folded(const Profile& profile) {
  std::string out;
  for (const FoldedStack& stack : folded_stacks(profile)) {
    for (std::size_t i = 0; i < stack.frames.size(); ++i) {
      out += (i > 0 ? ";" : "") + frame_text(stack.frames[i]);
    }
    out += " " + std::to_string(stack.self_ns) + "\n";
  }
  return out;
}

}  // namespace tscope::profile
