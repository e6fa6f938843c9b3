// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Is the training loop waiting for its data? The figures behind the report's Input pipeline
/// section, in the terms of TensorFlow's input-pipeline analyzer: HIGHLY input-bound when the
/// loop waits for input 20% or more of the step time, MODERATELY from 5% to 20%, NOT below 5%.
/// Computed only from measured times in the profile's host record (steps.h, zones.h,
/// data_source_stats.h), so a profile read back from JSON gives the same verdict.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tscope/profile/profile.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

enum class InputBound { Unknown, Not, Moderately, Highly };

/// "HIGHLY", "MODERATELY", "NOT", or "UNKNOWN".
[[nodiscard]] std::string_view input_bound_name(InputBound level) noexcept;
/// The level of a wait share (wait / step time, 0..1).
[[nodiscard]] InputBound input_bound_of(double wait_share) noexcept;

/// One data source, seen from its workers and its consumer.
struct DataSourceVerdict {
  std::string name;
  std::string worker_kind;
  std::int64_t queue_capacity = 0;
  double mean_ready = 0;            ///< batches waiting when the consumer asked, on average
  double empty_share = 0;           ///< takes that found the queue empty
  double batches_per_step = 0;      ///< batches taken / steps; 0 without steps
  std::vector<double> utilisation;  ///< per worker: busy / lifetime
  double busy_ns_per_batch = 0;     ///< per worker, averaged over the workers' batches
  std::int64_t workers = 0;
  /// Workers that keep up with the steps if data were free: ceil(busy_ns_per_batch x
  /// batches_per_step / compute_ns_per_step); 0 when it cannot be computed.
  std::int64_t workers_needed = 0;
};

struct InputVerdict {
  InputBound level = InputBound::Unknown;  ///< Unknown: no step was marked
  std::int64_t step_count = 0;
  std::int64_t step_ns = 0;        ///< sum over steps
  std::int64_t input_wait_ns = 0;  ///< sum over steps
  double wait_share = 0;           ///< input_wait_ns / step_ns
  std::int64_t step_median_ns = 0;
  std::int64_t step_p90_ns = 0;
  std::int64_t wait_median_ns = 0;
  std::int64_t wait_p90_ns = 0;
  /// Mean step time less its wait: the step if data were free.
  double compute_ns_per_step = 0;
  std::int64_t examples = 0;         ///< sum of the examples given to mark_step; 0: not given
  double steps_per_second = 0;       ///< now
  double free_steps_per_second = 0;  ///< if data were free
  /// The zones that dominate the data side, most tottime first (at most 3): zones that are not
  /// graph functions, not input waits and not on a call chain that reaches a graph function.
  std::vector<ZoneTotals> data_zones;
  std::vector<DataSourceVerdict> sources;
};

/// Nearest-rank percentile (0 < p <= 100) of `values`; 0 for none.
[[nodiscard]] std::int64_t percentile_ns(std::vector<std::int64_t> values, double p);

[[nodiscard]] InputVerdict compute_input_verdict(const HostRecord& host);

}  // namespace tscope::profile

#pragma GCC visibility pop
