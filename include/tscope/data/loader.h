// SPDX-License-Identifier: Apache-2.0
#pragma once
/// A data loader: batches made by worker threads or worker processes ahead of the training loop,
/// delivered in index order through a bounded prefetch queue.
///
///   tscope::data::Loader loader(batch_count, [&](std::int64_t index) { return make_batch(index);
///   },
///                               {.workers = 4, .worker_kind = WorkerKind::Process});
///   for (int epoch = 0; epoch < epochs; ++epoch) {
///     tscope::profile::mark_epoch(epoch);
///     loader.start_epoch();
///     while (std::optional<Batch> batch = loader.next()) {
///       train(*batch);
///       tscope::profile::mark_step(batch_size);
///     }
///   }
///
/// Worker w makes the batches w, w + N, w + 2N, ... of each epoch (N workers), at most `prefetch`
/// ahead of the consumer; next() returns batch i from worker i mod N, so the order does not
/// depend on timing. With no workers, next() makes the batch itself. Worker processes are forked
/// at each start_epoch() and send their batches through a pipe; they run only `make_batch`, so it
/// must not rely on threads of the parent (no OpenMP inside it).
///
/// With profiling on (zones.h), the loader reports to the profile's Input pipeline section: the
/// consumer's wait in next() is an input-wait zone, and each worker's batches, busy time and
/// lifetime, and the queue's occupancy are counted (data_source_stats.h). Worker processes also
/// record their zones into shards of the profile (worker_processes.h).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tscope/core/tensor.h"

#pragma GCC visibility push(default)

namespace tscope::profile {
class DataSourceStats;
}  // namespace tscope::profile

namespace tscope::data {

/// The tensors of one batch (inputs and labels, in the order the training function takes them).
using Batch = std::vector<Tensor>;

/// Makes batch `index` of an epoch (0 .. batch_count - 1). Called from worker threads at the same
/// time for different indices, so it must be safe to call concurrently.
using MakeBatch = std::function<Batch(std::int64_t index)>;

enum class WorkerKind { Thread, Process };

struct LoaderOptions {
  int workers = 0;  ///< 0: next() makes each batch on the caller's thread
  WorkerKind worker_kind = WorkerKind::Thread;
  int prefetch = 2;             ///< batches each worker may hold ready
  std::string name = "loader";  ///< in the report and in error messages
};

class Loader {
 public:
  /// Throws InvalidArgument for a negative batch count or worker count, or prefetch < 1.
  Loader(std::int64_t batch_count, MakeBatch make_batch, LoaderOptions options = {});
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  /// Starts an epoch: the workers begin making its batches. Stops an epoch still running.
  void start_epoch();
  /// The next batch of the epoch, nullopt after the last. Waits for it while the workers have not
  /// made it yet. Rethrows an error of make_batch, naming the worker and the batch; a worker
  /// process that dies is an error naming it and how it ended.
  [[nodiscard]] std::optional<Batch> next();
  /// Stops the workers of the current epoch (also done by start_epoch and the destructor).
  void stop();

  [[nodiscard]] std::int64_t batch_count() const noexcept { return batch_count_; }
  [[nodiscard]] const LoaderOptions& options() const noexcept { return options_; }

  /// What runs the workers of one epoch (loader.cpp: threads; worker_processes.cpp: processes).
  class Workers;

 private:
  std::int64_t batch_count_;
  MakeBatch make_batch_;
  LoaderOptions options_;
  std::int64_t next_index_ = 0;
  bool epoch_started_ = false;
  std::unique_ptr<Workers> workers_;
  std::shared_ptr<profile::DataSourceStats> stats_;  // nullptr unless profiling
};

}  // namespace tscope::data

#pragma GCC visibility pop
