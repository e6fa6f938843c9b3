// SPDX-License-Identifier: Apache-2.0
#pragma once
// The workers of one epoch of a Loader: each worker w fills its own bounded queue with the
// batches w, w + N, ... in order, so the consumer takes batch i from queue i mod N. Threads make
// the batches themselves (thread_workers.cpp); for worker processes, a reader thread per worker
// fills the queue from the worker's pipe (process_workers.cpp).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "tscope/data/loader.h"
#include "tscope/profile/data_source_stats.h"

namespace tscope::data {

/// One worker's made batches, at most `capacity` ahead of the consumer.
class WorkerQueue {
 public:
  explicit WorkerQueue(int capacity) : capacity_(capacity) {}

  /// Waits for room (false: stopped), then the producer may make its next batch.
  bool wait_for_room();
  /// Hands over batch `index` (or the error that replaced it).
  void push(std::int64_t index, Batch batch, std::exception_ptr error);
  /// Takes batch `index`, waiting for it. Rethrows its error.
  Batch take(std::int64_t index);
  /// Wakes everyone; producers stop, take() throws.
  void stop();
  /// The producer ended for good: take() of a batch it never made throws `error`.
  void close(std::exception_ptr error);
  [[nodiscard]] int ready() const noexcept;

 private:
  struct Made {
    std::int64_t index;
    Batch batch;
    std::exception_ptr error;
  };
  const int capacity_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Made> made_;
  bool stopped_ = false;
  bool closed_ = false;
  std::exception_ptr close_error_;
};

class Loader::Workers {
 public:
  Workers(int count, int prefetch, std::shared_ptr<profile::DataSourceStats> stats);
  virtual ~Workers() = default;
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  /// Batch `index`, waiting for its worker to make it.
  Batch take(std::int64_t index);
  /// Batches made and not yet taken, over all workers.
  [[nodiscard]] int ready() const noexcept;
  /// Stops and joins the workers; idempotent.
  virtual void stop() = 0;

 protected:
  [[nodiscard]] int count() const noexcept { return static_cast<int>(queues_.size()); }
  WorkerQueue& queue(int worker) { return *queues_[static_cast<std::size_t>(worker)]; }
  profile::DataSourceStats* stats() const noexcept { return stats_.get(); }
  void stop_queues();

 private:
  std::vector<std::unique_ptr<WorkerQueue>> queues_;
  std::shared_ptr<profile::DataSourceStats> stats_;
};

/// The error that replaces a batch whose making failed: the caught error's kind (InvalidArgument
/// for a foreign exception) and a message naming the loader, the worker and the batch.
[[nodiscard]] std::exception_ptr batch_failure(const std::string& name,
                                               const std::string& worker,
                                               std::int64_t index,
                                               const std::exception_ptr& caught);

/// What the workers of one epoch are given. `make_batch` outlives them (the Loader owns it).
struct WorkerSetup {
  int count = 0;
  int prefetch = 1;
  std::int64_t batch_count = 0;
  const MakeBatch* make_batch = nullptr;
  std::string name;
  std::shared_ptr<profile::DataSourceStats> stats;  // nullptr unless profiling
};

/// `setup.count` threads calling make_batch.
[[nodiscard]] std::unique_ptr<Loader::Workers> start_thread_workers(const WorkerSetup& setup);
/// `setup.count` forked processes calling make_batch, each sending its batches through a pipe.
[[nodiscard]] std::unique_ptr<Loader::Workers> start_process_workers(const WorkerSetup& setup);

}  // namespace tscope::data
