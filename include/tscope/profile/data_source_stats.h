// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Counters of a data source (a producer of input batches, such as tscope::data::Loader) for the
/// report's Input pipeline section: each worker's batches, busy time and lifetime, and the
/// consumer's waits and what it found in the queue. Workers and the consumer update them with
/// relaxed atomics (no lock, no allocation); snapshots read them. A source registered while zones
/// record (zones.h) stays registered for the life of the process, so the report still shows it
/// after the loader is gone.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tscope/profile/profile.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

class DataSourceStats {
 public:
  /// A registered source, or nullptr when zones do not record (then nothing is counted).
  [[nodiscard]] static std::shared_ptr<DataSourceStats> create_if_profiling(std::string name,
                                                                            std::string worker_kind,
                                                                            int worker_count,
                                                                            int queue_capacity);

  DataSourceStats(std::string name, std::string worker_kind, int worker_count, int queue_capacity);

  /// Worker `worker` (0-based) starts now, as thread or process `os_id`.
  void worker_started(int worker, std::int64_t os_id) noexcept;
  /// It produced one batch, busy for `busy_ns`.
  void batch_produced(int worker, std::int64_t busy_ns) noexcept;
  /// It stopped now (it may start again, for the next epoch: lifetimes add up).
  void worker_stopped(int worker) noexcept;
  /// The consumer took a batch after waiting `wait_ns`; `ready` batches were waiting when it
  /// asked (clamped to the queue's capacity).
  void batch_taken(std::int64_t wait_ns, int ready) noexcept;

  [[nodiscard]] DataSourceRecord snapshot() const;

 private:
  struct Worker {
    std::atomic<std::int64_t> os_id{0};
    std::atomic<std::int64_t> batches{0};
    std::atomic<std::int64_t> busy_ns{0};
    std::atomic<std::int64_t> start_ns{-1};  // -1: not running
    std::atomic<std::int64_t> lived_ns{0};   // over the runs that ended
  };
  std::string name_;
  std::string worker_kind_;
  int queue_capacity_;
  std::unique_ptr<Worker[]> workers_;
  int worker_count_;
  std::atomic<std::int64_t> batches_taken_{0};
  std::atomic<std::int64_t> wait_ns_{0};
  std::unique_ptr<std::atomic<std::int64_t>[]> occupancy_;  // queue_capacity_ + 1 entries
};

}  // namespace tscope::profile

#pragma GCC visibility pop
