// SPDX-License-Identifier: Apache-2.0
// The zone model's derived views (profile.h): the merged tree, per-site totals and edges. Pure
// functions of the recorded per-thread trees, so a profile read back from JSON gives the same.
#include <algorithm>
#include <map>
#include <utility>

#include "tscope/profile/profile.h"

namespace tscope::profile {

bool HostRecord::has_program_zones() const noexcept {
  return std::any_of(sites.begin(), sites.end(),
                     [](const ZoneSiteRecord& site) { return site.kind != "function"; });
}

ZoneThreadRecord merge_zone_threads(const HostRecord& host) {
  ZoneThreadRecord merged;
  merged.thread_index = -1;
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> index_of;  // (parent, site)
  std::map<std::int64_t, ZoneValueRecord> values;
  for (const ZoneThreadRecord& thread : host.threads) {
    std::vector<std::int64_t> local_to_merged(thread.nodes.size(), -1);
    for (std::size_t i = 0; i < thread.nodes.size(); ++i) {
      const ZoneNodeRecord& node = thread.nodes[i];
      const std::int64_t parent =
          node.parent < 0 ? -1 : local_to_merged[static_cast<std::size_t>(node.parent)];
      auto [it, inserted] =
          index_of.try_emplace({parent, node.site}, static_cast<std::int64_t>(merged.nodes.size()));
      if (inserted) merged.nodes.push_back({.site = node.site, .parent = parent});
      ZoneNodeRecord& target = merged.nodes[static_cast<std::size_t>(it->second)];
      target.call_count += node.call_count;
      target.total_ns += node.total_ns;
      target.self_ns += node.self_ns;
      local_to_merged[i] = it->second;
    }
    for (const ZoneValueRecord& value : thread.values) {
      auto [it, inserted] = values.try_emplace(value.site, value);
      if (inserted) continue;
      ZoneValueRecord& target = it->second;
      if (value.count == 0) continue;
      target.min = target.count == 0 ? value.min : std::min(target.min, value.min);
      target.max = target.count == 0 ? value.max : std::max(target.max, value.max);
      target.count += value.count;
      target.sum += value.sum;
    }
  }
  for (const auto& [site, value] : values) merged.values.push_back(value);
  return merged;
}

std::vector<ZoneTotals> zone_totals(const ZoneThreadRecord& tree) {
  std::map<std::int64_t, ZoneTotals> by_site;
  for (const ZoneNodeRecord& node : tree.nodes) {
    ZoneTotals& totals = by_site[node.site];
    totals.site = node.site;
    totals.call_count += node.call_count;
    totals.self_ns += node.self_ns;
    // cProfile's rule: time inside a recursive re-entry is already in the outer call's cumtime.
    bool reentered = false;
    for (std::int64_t up = node.parent; up >= 0 && !reentered;
         up = tree.nodes[static_cast<std::size_t>(up)].parent) {
      reentered = tree.nodes[static_cast<std::size_t>(up)].site == node.site;
    }
    if (!reentered) totals.cumulative_ns += node.total_ns;
  }
  std::vector<ZoneTotals> result;
  for (const auto& [site, totals] : by_site) {
    if (totals.call_count > 0) result.push_back(totals);
  }
  return result;
}

std::vector<ZoneEdge> zone_edges(const ZoneThreadRecord& tree) {
  std::vector<ZoneEdge> edges;
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> index_of;
  for (const ZoneNodeRecord& node : tree.nodes) {
    const std::int64_t caller =
        node.parent < 0 ? -1 : tree.nodes[static_cast<std::size_t>(node.parent)].site;
    auto [it, inserted] = index_of.try_emplace({caller, node.site}, edges.size());
    if (inserted) edges.push_back({.caller = caller, .callee = node.site});
    ZoneEdge& edge = edges[it->second];
    edge.call_count += node.call_count;
    edge.self_ns += node.self_ns;
    edge.total_ns += node.total_ns;
  }
  return edges;
}

HostRecord merge_host_records(const HostRecord& a, const HostRecord& b) {
  if (b.empty()) return a;
  if (a.empty()) return b;
  HostRecord merged = a;
  const auto offset = static_cast<std::int64_t>(a.sites.size());
  merged.sites.insert(merged.sites.end(), b.sites.begin(), b.sites.end());
  // Threads point at their process, and b's processes follow a's. Once either side lists
  // processes, a side that lists none stands for one process of its own, not named.
  const bool with_processes = !a.processes.empty() || !b.processes.empty();
  if (with_processes && merged.processes.empty()) merged.processes.push_back({.state = "main"});
  const auto process_offset =
      with_processes ? static_cast<std::int64_t>(merged.processes.size()) : 0;
  if (with_processes && b.processes.empty()) merged.processes.push_back({.state = "main"});
  merged.processes.insert(merged.processes.end(), b.processes.begin(), b.processes.end());
  for (ZoneThreadRecord thread : b.threads) {
    for (ZoneNodeRecord& node : thread.nodes) node.site += offset;
    for (ZoneValueRecord& value : thread.values) value.site += offset;
    thread.process += process_offset;
    merged.threads.push_back(std::move(thread));
  }
  const auto step_offset = static_cast<std::int64_t>(a.steps.size());
  merged.steps.insert(merged.steps.end(), b.steps.begin(), b.steps.end());
  merged.dropped_step_count += b.dropped_step_count;
  for (EpochRecord epoch : b.epochs) {
    epoch.first_step += step_offset;
    for (ZoneTotals& zone : epoch.zones) zone.site += offset;
    merged.epochs.push_back(std::move(epoch));
  }
  merged.data_sources.insert(merged.data_sources.end(), b.data_sources.begin(),
                             b.data_sources.end());
  if (merged.clock.empty()) merged.clock = b.clock;
  merged.zone_overhead_ns = std::max(a.zone_overhead_ns, b.zone_overhead_ns);
  return merged;
}

}  // namespace tscope::profile
