// SPDX-License-Identifier: Apache-2.0
#include "tscope/profile/profile_collector.h"

#include <algorithm>

#include "tscope/core/clock.h"
#include "tscope/core/process_counters.h"

namespace tscope::profile {

void ProfileCollector::attach(const std::shared_ptr<const ProfileSource>& source) {
  std::lock_guard lock(mutex_);
  entries_.push_back({source.get(), source, std::nullopt});
}

void ProfileCollector::retire(const ProfileSource* source, FunctionRecord record) {
  std::lock_guard lock(mutex_);
  for (Entry& entry : entries_) {
    if (entry.key == source && !entry.retired) {
      entry.retired = std::move(record);
      entry.live.reset();
      return;
    }
  }
}

Profile ProfileCollector::snapshot() const {
  Profile profile;
  profile.title = title_;
  profile.grad_ns = grad_time_ns();
  profile.since_load_ns = ns_since_library_load();
  // Live sources are snapshotted outside the lock: a snapshot waits for calls in flight, and the
  // last reference to a source may be the one held here, whose destructor retires into this
  // collector and takes the lock itself.
  std::vector<std::shared_ptr<const ProfileSource>> live_sources;
  {
    std::lock_guard lock(mutex_);
    for (const Entry& entry : entries_) {
      if (entry.retired) {
        profile.functions.push_back(*entry.retired);
        live_sources.emplace_back();
      } else if (auto live = entry.live.lock()) {
        profile.functions.emplace_back();
        live_sources.push_back(std::move(live));
      }
    }
  }
  for (std::size_t i = 0; i < live_sources.size(); ++i) {
    if (live_sources[i]) profile.functions[i] = live_sources[i]->snapshot();
  }
  live_sources.clear();
  for (const FunctionRecord& function : profile.functions) {
    if (function.clock.empty()) continue;
    if (profile.clock.find(function.clock) == std::string::npos) {
      profile.clock += (profile.clock.empty() ? "" : ", ") + function.clock;
    }
    profile.clock_read_ns = std::max(profile.clock_read_ns, function.clock_read_ns);
    profile.overhead_ns_per_node =
        std::max(profile.overhead_ns_per_node, function.overhead_ns_per_node);
    profile.roof_bytes_per_second =
        std::max(profile.roof_bytes_per_second, function.roof_bytes_per_second);
    profile.roof_flops_per_second =
        std::max(profile.roof_flops_per_second, function.roof_flops_per_second);
  }
  return profile;
}

}  // namespace tscope::profile
