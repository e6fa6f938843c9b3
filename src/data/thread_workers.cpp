// SPDX-License-Identifier: Apache-2.0
// Worker threads of a Loader: each makes its share of the epoch's batches into its own queue.
#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

#include "tscope/core/error.h"
#include "tscope/profile/zone_recorder.h"
#include "tscope/profile/zones.h"
#include "workers.h"

namespace tscope::data {
namespace {

class ThreadWorkers final : public Loader::Workers {
 public:
  explicit ThreadWorkers(const WorkerSetup& setup)
      : Workers(setup.count, setup.prefetch, setup.stats), setup_(setup) {
    for (int w = 0; w < setup.count; ++w) threads_.emplace_back([this, w] { run(w); });
  }
  ~ThreadWorkers() override { stop(); }
  ThreadWorkers(const ThreadWorkers&) = delete;
  ThreadWorkers& operator=(const ThreadWorkers&) = delete;

  void stop() override {
    stop_queues();
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }

 private:
  void run(int w) {
    const std::string& name = setup_.name;
    profile::set_zone_thread_name(fmt::format("{} worker {}", name, w));
    if (stats() != nullptr) {
      stats()->worker_started(w, static_cast<std::int64_t>(::syscall(SYS_gettid)));
    }
    for (std::int64_t index = w; index < setup_.batch_count; index += setup_.count) {
      if (!queue(w).wait_for_room()) break;
      const std::int64_t start_ns = stats() != nullptr ? profile::zone_clock_ns() : 0;
      Batch batch;
      std::exception_ptr error;
      try {
        TSCOPE_ZONE("make batch");
        batch = (*setup_.make_batch)(index);
      } catch (...) {
        error = batch_failure(name, fmt::format("worker thread {}", w), index,
                              std::current_exception());
      }
      if (stats() != nullptr) stats()->batch_produced(w, profile::zone_clock_ns() - start_ns);
      const bool failed = error != nullptr;
      queue(w).push(index, std::move(batch), std::move(error));
      if (failed) break;  // the consumer stops at this batch
    }
    if (stats() != nullptr) stats()->worker_stopped(w);
  }

  WorkerSetup setup_;
  std::vector<std::thread> threads_;
};

}  // namespace

std::unique_ptr<Loader::Workers> start_thread_workers(const WorkerSetup& setup) {
  return std::make_unique<ThreadWorkers>(setup);
}

}  // namespace tscope::data
