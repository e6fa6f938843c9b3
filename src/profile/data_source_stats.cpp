// SPDX-License-Identifier: Apache-2.0
#include "tscope/profile/data_source_stats.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "steps_recorder.h"
#include "tscope/profile/zone_recorder.h"
#include "tscope/profile/zones.h"

namespace tscope::profile {
namespace {

struct SourceRegistry {
  std::mutex mutex;
  std::vector<std::shared_ptr<DataSourceStats>> sources;
};

SourceRegistry& source_registry() {
  // Leaked: the exit-time writer reads it during static destruction.
  static SourceRegistry& registry = *new SourceRegistry();
  return registry;
}

}  // namespace

std::shared_ptr<DataSourceStats> DataSourceStats::create_if_profiling(std::string name,
                                                                      std::string worker_kind,
                                                                      int worker_count,
                                                                      int queue_capacity) {
  if (!zones_enabled()) return nullptr;
  auto stats = std::make_shared<DataSourceStats>(std::move(name), std::move(worker_kind),
                                                 worker_count, queue_capacity);
  SourceRegistry& registry = source_registry();
  std::lock_guard lock(registry.mutex);
  registry.sources.push_back(stats);
  return stats;
}

DataSourceStats::DataSourceStats(std::string name,
                                 std::string worker_kind,
                                 int worker_count,
                                 int queue_capacity)
    : name_(std::move(name)),
      worker_kind_(std::move(worker_kind)),
      queue_capacity_(std::max(queue_capacity, 0)),
      workers_(std::make_unique<Worker[]>(static_cast<std::size_t>(std::max(worker_count, 0)))),
      worker_count_(std::max(worker_count, 0)),
      occupancy_(std::make_unique<std::atomic<std::int64_t>[]>(
          static_cast<std::size_t>(queue_capacity_) + 1)) {}

void DataSourceStats::worker_started(int worker, std::int64_t os_id) noexcept {
  if (worker < 0 || worker >= worker_count_) return;
  Worker& slot = workers_[static_cast<std::size_t>(worker)];
  slot.os_id.store(os_id, std::memory_order_relaxed);
  slot.start_ns.store(zone_clock_ns(), std::memory_order_relaxed);
}

void DataSourceStats::batch_produced(int worker, std::int64_t busy_ns) noexcept {
  if (worker < 0 || worker >= worker_count_) return;
  Worker& slot = workers_[static_cast<std::size_t>(worker)];
  slot.batches.fetch_add(1, std::memory_order_relaxed);
  slot.busy_ns.fetch_add(busy_ns, std::memory_order_relaxed);
}

void DataSourceStats::worker_stopped(int worker) noexcept {
  if (worker < 0 || worker >= worker_count_) return;
  Worker& slot = workers_[static_cast<std::size_t>(worker)];
  const std::int64_t start_ns = slot.start_ns.exchange(-1, std::memory_order_relaxed);
  if (start_ns >= 0) slot.lived_ns.fetch_add(zone_clock_ns() - start_ns, std::memory_order_relaxed);
}

void DataSourceStats::batch_taken(std::int64_t wait_ns, int ready) noexcept {
  batches_taken_.fetch_add(1, std::memory_order_relaxed);
  wait_ns_.fetch_add(wait_ns, std::memory_order_relaxed);
  const int slot = std::clamp(ready, 0, queue_capacity_);
  occupancy_[static_cast<std::size_t>(slot)].fetch_add(1, std::memory_order_relaxed);
}

DataSourceRecord DataSourceStats::snapshot() const {
  DataSourceRecord record{.name = name_,
                          .worker_kind = worker_kind_,
                          .queue_capacity = queue_capacity_,
                          .batches_taken = batches_taken_.load(std::memory_order_relaxed),
                          .wait_ns = wait_ns_.load(std::memory_order_relaxed)};
  const std::int64_t now_ns = zone_clock_ns();
  for (int i = 0; i < worker_count_; ++i) {
    const Worker& slot = workers_[static_cast<std::size_t>(i)];
    const std::int64_t start_ns = slot.start_ns.load(std::memory_order_relaxed);
    record.workers.push_back({.label = "worker " + std::to_string(i),
                              .os_id = slot.os_id.load(std::memory_order_relaxed),
                              .batches = slot.batches.load(std::memory_order_relaxed),
                              .busy_ns = slot.busy_ns.load(std::memory_order_relaxed),
                              .lifetime_ns = slot.lived_ns.load(std::memory_order_relaxed) +
                                             (start_ns < 0 ? 0 : now_ns - start_ns)});
  }
  for (int k = 0; k <= queue_capacity_; ++k) {
    record.occupancy.push_back(
        occupancy_[static_cast<std::size_t>(k)].load(std::memory_order_relaxed));
  }
  return record;
}

void attach_data_sources(HostRecord& host) {
  SourceRegistry& registry = source_registry();
  std::lock_guard lock(registry.mutex);
  for (const auto& source : registry.sources) host.data_sources.push_back(source->snapshot());
}

void reset_data_sources() {
  SourceRegistry& registry = source_registry();
  std::lock_guard lock(registry.mutex);
  registry.sources.clear();
}

}  // namespace tscope::profile
