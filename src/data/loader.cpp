// SPDX-License-Identifier: Apache-2.0
#include "tscope/data/loader.h"

#include <utility>

#include "tscope/core/error.h"
#include "tscope/profile/data_source_stats.h"
#include "tscope/profile/zone_recorder.h"
#include "tscope/profile/zones.h"
#include "workers.h"

namespace tscope::data {
namespace {

std::string kind_name(const LoaderOptions& options) {
  if (options.workers == 0) return "inline";
  return options.worker_kind == WorkerKind::Process ? "process" : "thread";
}

}  // namespace

Loader::Loader(std::int64_t batch_count, MakeBatch make_batch, LoaderOptions options)
    : batch_count_(batch_count), make_batch_(std::move(make_batch)), options_(std::move(options)) {
  if (batch_count_ < 0) {
    throw_error(ErrorKind::InvalidArgument, "{}: the batch count must not be negative, not {}",
                options_.name, batch_count_);
  }
  if (options_.workers < 0) {
    throw_error(ErrorKind::InvalidArgument, "{}: the worker count must not be negative, not {}",
                options_.name, options_.workers);
  }
  if (options_.prefetch < 1) {
    throw_error(ErrorKind::InvalidArgument, "{}: prefetch must be at least 1, not {}",
                options_.name, options_.prefetch);
  }
  if (!make_batch_) {
    throw_error(ErrorKind::InvalidArgument, "{}: no function to make batches", options_.name);
  }
  stats_ = profile::DataSourceStats::create_if_profiling(
      options_.name, kind_name(options_), options_.workers, options_.workers * options_.prefetch);
}

Loader::~Loader() { stop(); }

void Loader::start_epoch() {
  stop();
  next_index_ = 0;
  epoch_started_ = true;
  if (options_.workers == 0 || batch_count_ == 0) return;
  const WorkerSetup setup{.count = options_.workers,
                          .prefetch = options_.prefetch,
                          .batch_count = batch_count_,
                          .make_batch = &make_batch_,
                          .name = options_.name,
                          .stats = stats_};
  workers_ = options_.worker_kind == WorkerKind::Process ? start_process_workers(setup)
                                                         : start_thread_workers(setup);
}

std::optional<Batch> Loader::next() {
  if (!epoch_started_) {
    throw_error(ErrorKind::InvalidArgument, "{}: next() before start_epoch()", options_.name);
  }
  if (next_index_ >= batch_count_) {
    stop();
    return std::nullopt;
  }
  const std::int64_t index = next_index_++;
  TSCOPE_INPUT_WAIT("Loader::next");
  if (workers_ != nullptr) return workers_->take(index);
  // No workers: the batch is made here, and all of that time is the loop's wait for input.
  const std::int64_t start_ns = stats_ != nullptr ? profile::zone_clock_ns() : 0;
  try {
    TSCOPE_ZONE("make batch");
    Batch batch = make_batch_(index);
    if (stats_ != nullptr) stats_->batch_taken(profile::zone_clock_ns() - start_ns, 0);
    return batch;
  } catch (...) {
    std::rethrow_exception(
        batch_failure(options_.name, "the consumer", index, std::current_exception()));
  }
}

void Loader::stop() {
  if (workers_ == nullptr) return;
  workers_->stop();
  workers_.reset();
}

}  // namespace tscope::data
