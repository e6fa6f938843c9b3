// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <string>
#include <utility>

#include "tscope/core/error.h"
#include "tscope/profile/zone_recorder.h"
#include "tscope/profile/zones.h"
#include "workers.h"

namespace tscope::data {

bool WorkerQueue::wait_for_room() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stopped_ || static_cast<int>(made_.size()) < capacity_; });
  return !stopped_;
}

void WorkerQueue::push(std::int64_t index, Batch batch, std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    made_.push_back({index, std::move(batch), std::move(error)});
  }
  changed_.notify_all();
}

Batch WorkerQueue::take(std::int64_t index) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stopped_ || closed_ || !made_.empty(); });
  if (made_.empty()) {
    if (close_error_) std::rethrow_exception(close_error_);
    throw_error(ErrorKind::Internal, "the loader's worker stopped before batch {}", index);
  }
  Made made = std::move(made_.front());
  made_.pop_front();
  lock.unlock();
  changed_.notify_all();
  if (made.index != index) {
    throw_error(ErrorKind::Internal, "the loader expected batch {} and received batch {}", index,
                made.index);
  }
  if (made.error) std::rethrow_exception(made.error);
  return std::move(made.batch);
}

void WorkerQueue::stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  changed_.notify_all();
}

void WorkerQueue::close(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    close_error_ = std::move(error);
  }
  changed_.notify_all();
}

int WorkerQueue::ready() const noexcept {
  std::lock_guard lock(mutex_);
  return static_cast<int>(made_.size());
}

std::exception_ptr batch_failure(const std::string& name,
                                 const std::string& worker,
                                 std::int64_t index,
                                 const std::exception_ptr& caught) {
  ErrorKind kind = ErrorKind::InvalidArgument;
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(caught);
  } catch (const Error& error) {
    kind = error.kind();
    what = error.message();
  } catch (const std::exception& error) {
    what = error.what();
  } catch (...) {
  }
  return std::make_exception_ptr(
      Error(kind, fmt::format("{}: {} failed making batch {}: {}", name, worker, index, what)));
}

Loader::Workers::Workers(int count, int prefetch, std::shared_ptr<profile::DataSourceStats> stats)
    : stats_(std::move(stats)) {
  for (int w = 0; w < count; ++w) queues_.push_back(std::make_unique<WorkerQueue>(prefetch));
}

Batch Loader::Workers::take(std::int64_t index) {
  WorkerQueue& from = queue(static_cast<int>(index % count()));
  if (stats_ == nullptr) return from.take(index);
  const int ready_now = ready();
  const std::int64_t start_ns = profile::zone_clock_ns();
  Batch batch = from.take(index);
  stats_->batch_taken(profile::zone_clock_ns() - start_ns, ready_now);
  return batch;
}

int Loader::Workers::ready() const noexcept {
  int total = 0;
  for (const auto& queue : queues_) total += queue->ready();
  return total;
}

void Loader::Workers::stop_queues() {
  for (const auto& queue : queues_) queue->stop();
}

}  // namespace tscope::data
