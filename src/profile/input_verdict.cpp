// SPDX-License-Identifier: Apache-2.0
#include "tscope/profile/input_verdict.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tscope::profile {
namespace {

// The thresholds of TensorFlow's input-pipeline analyzer, so its users read the verdict at once.
constexpr double kHighlyInputBound = 0.20;
constexpr double kModeratelyInputBound = 0.05;
constexpr std::size_t kDataZoneCount = 3;

// Sites of the merged tree that are graph functions or lead to one (the training side).
std::vector<bool> training_side_sites(const HostRecord& host, const ZoneThreadRecord& merged) {
  std::vector<bool> training(host.sites.size(), false);
  for (const ZoneNodeRecord& node : merged.nodes) {
    if (host.sites[static_cast<std::size_t>(node.site)].kind != "function") continue;
    for (std::int64_t at = node.parent; at >= 0;
         at = merged.nodes[static_cast<std::size_t>(at)].parent) {
      training[static_cast<std::size_t>(merged.nodes[static_cast<std::size_t>(at)].site)] = true;
    }
  }
  return training;
}

std::vector<ZoneTotals> dominant_data_zones(const HostRecord& host) {
  const ZoneThreadRecord merged = merge_zone_threads(host);
  const std::vector<bool> training = training_side_sites(host, merged);
  std::vector<ZoneTotals> rows;
  for (const ZoneTotals& totals : zone_totals(merged)) {
    const std::string& kind = host.sites[static_cast<std::size_t>(totals.site)].kind;
    if (kind != "zone" || training[static_cast<std::size_t>(totals.site)]) continue;
    if (totals.self_ns > 0) rows.push_back(totals);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ZoneTotals& a, const ZoneTotals& b) { return a.self_ns > b.self_ns; });
  if (rows.size() > kDataZoneCount) rows.resize(kDataZoneCount);
  return rows;
}

DataSourceVerdict source_verdict(const DataSourceRecord& source,
                                 std::int64_t step_count,
                                 double compute_ns_per_step) {
  DataSourceVerdict verdict{.name = source.name,
                            .worker_kind = source.worker_kind,
                            .queue_capacity = source.queue_capacity,
                            .workers = static_cast<std::int64_t>(source.workers.size())};
  std::int64_t takes = 0;
  double ready_sum = 0;
  for (std::size_t k = 0; k < source.occupancy.size(); ++k) {
    takes += source.occupancy[k];
    ready_sum += static_cast<double>(k) * static_cast<double>(source.occupancy[k]);
  }
  if (takes > 0) {
    verdict.mean_ready = ready_sum / static_cast<double>(takes);
    verdict.empty_share = source.occupancy.empty() ? 0
                                                   : static_cast<double>(source.occupancy[0]) /
                                                         static_cast<double>(takes);
  }
  if (step_count > 0) {
    verdict.batches_per_step =
        static_cast<double>(source.batches_taken) / static_cast<double>(step_count);
  }
  std::int64_t batches = 0;
  std::int64_t busy_ns = 0;
  for (const DataWorkerRecord& worker : source.workers) {
    verdict.utilisation.push_back(worker.lifetime_ns > 0
                                      ? static_cast<double>(worker.busy_ns) /
                                            static_cast<double>(worker.lifetime_ns)
                                      : 0.0);
    batches += worker.batches;
    busy_ns += worker.busy_ns;
  }
  if (batches > 0)
    verdict.busy_ns_per_batch = static_cast<double>(busy_ns) / static_cast<double>(batches);
  if (verdict.busy_ns_per_batch > 0 && verdict.batches_per_step > 0 && compute_ns_per_step > 0) {
    const double needed =
        verdict.busy_ns_per_batch * verdict.batches_per_step / compute_ns_per_step;
    verdict.workers_needed =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(needed)));
  }
  return verdict;
}

}  // namespace

std::string_view input_bound_name(InputBound level) noexcept {
  switch (level) {
    case InputBound::Not:
      return "NOT";
    case InputBound::Moderately:
      return "MODERATELY";
    case InputBound::Highly:
      return "HIGHLY";
    case InputBound::Unknown:
      break;
  }
  return "UNKNOWN";
}

InputBound input_bound_of(double wait_share) noexcept {
  if (wait_share >= kHighlyInputBound) return InputBound::Highly;
  if (wait_share >= kModeratelyInputBound) return InputBound::Moderately;
  return InputBound::Not;
}

std::int64_t percentile_ns(std::vector<std::int64_t> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank =
      static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

InputVerdict compute_input_verdict(const HostRecord& host) {
  InputVerdict verdict;
  std::vector<std::int64_t> steps;
  std::vector<std::int64_t> waits;
  for (const StepRecord& step : host.steps) {
    steps.push_back(step.duration_ns);
    waits.push_back(step.input_wait_ns);
    verdict.step_ns += step.duration_ns;
    verdict.input_wait_ns += step.input_wait_ns;
    verdict.examples += step.examples;
  }
  verdict.step_count = static_cast<std::int64_t>(host.steps.size());
  if (verdict.step_count > 0 && verdict.step_ns > 0) {
    verdict.wait_share =
        static_cast<double>(verdict.input_wait_ns) / static_cast<double>(verdict.step_ns);
    verdict.level = input_bound_of(verdict.wait_share);
    verdict.step_median_ns = percentile_ns(steps, 50);
    verdict.step_p90_ns = percentile_ns(steps, 90);
    verdict.wait_median_ns = percentile_ns(waits, 50);
    verdict.wait_p90_ns = percentile_ns(waits, 90);
    const auto count = static_cast<double>(verdict.step_count);
    verdict.compute_ns_per_step =
        static_cast<double>(verdict.step_ns - verdict.input_wait_ns) / count;
    verdict.steps_per_second = count * 1e9 / static_cast<double>(verdict.step_ns);
    if (verdict.compute_ns_per_step > 0) {
      verdict.free_steps_per_second = 1e9 / verdict.compute_ns_per_step;
    }
  }
  verdict.data_zones = dominant_data_zones(host);
  for (const DataSourceRecord& source : host.data_sources) {
    verdict.sources.push_back(
        source_verdict(source, verdict.step_count, verdict.compute_ns_per_step));
  }
  return verdict;
}

}  // namespace tscope::profile
