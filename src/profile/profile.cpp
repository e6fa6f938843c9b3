// SPDX-License-Identifier: Apache-2.0
#include "tscope/profile/profile.h"

#include <algorithm>

namespace tscope::profile {

std::int64_t Profile::kernel_ns() const {
  std::int64_t total = 0;
  for (const FunctionRecord& function : functions) {
    for (const NodeRecord& node : function.nodes) total += node.total_ns;
  }
  return total;
}

Profile sum_profiles(const std::vector<Profile>& profiles, std::string title) {
  Profile sum;
  sum.title = std::move(title);
  for (const Profile& profile : profiles) {
    sum.functions.insert(sum.functions.end(), profile.functions.begin(), profile.functions.end());
    // Process-wide figures: the profiles may come from one process (same values) or several.
    sum.grad_ns = std::max(sum.grad_ns, profile.grad_ns);
    sum.since_load_ns = std::max(sum.since_load_ns, profile.since_load_ns);
    sum.overhead_ns_per_node = std::max(sum.overhead_ns_per_node, profile.overhead_ns_per_node);
    sum.clock_read_ns = std::max(sum.clock_read_ns, profile.clock_read_ns);
    sum.roof_bytes_per_second = std::max(sum.roof_bytes_per_second, profile.roof_bytes_per_second);
    sum.roof_flops_per_second = std::max(sum.roof_flops_per_second, profile.roof_flops_per_second);
    if (!profile.clock.empty() && sum.clock.find(profile.clock) == std::string::npos) {
      sum.clock += (sum.clock.empty() ? "" : ", ") + profile.clock;
    }
    if (sum.blas.empty()) sum.blas = profile.blas;
    if (sum.openmp.empty()) sum.openmp = profile.openmp;
    sum.host = merge_host_records(sum.host, profile.host);
  }
  return sum;
}

}  // namespace tscope::profile
