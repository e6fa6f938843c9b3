// SPDX-License-Identifier: Apache-2.0
#pragma once
// What zones.cpp needs from the step log (steps.cpp) and the data-source registry
// (data_source_stats.cpp): the input wait of the current step, and the records a snapshot adds.
#include <cstdint>

#include "tscope/profile/profile.h"

namespace tscope::profile {

/// Every thread's zone call tree, without the steps and data sources that snapshot_host_zones
/// adds to it (zones.cpp).
[[nodiscard]] HostRecord snapshot_zone_trees();
/// Adds an input-wait zone's time to the calling thread's current step.
void add_input_wait_ns(std::int64_t ns) noexcept;
/// The marked steps and epochs (with each epoch's zone totals, from host's trees) into `host`.
void attach_steps(HostRecord& host);
/// Every data source registered so far into `host`.
void attach_data_sources(HostRecord& host);
/// Forget the steps and epochs, and the data sources (reset_host_zones).
void reset_step_log();
void reset_data_sources();

}  // namespace tscope::profile
