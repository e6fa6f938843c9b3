// SPDX-License-Identifier: Apache-2.0
// tscope::data::Loader with worker threads and worker processes: order, errors, a worker that
// dies, stopping early, its counters; and synthetic pipelines with injected delays, whose
// verdict must come out right every time.
#include "tscope/data/loader.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include "support/test_util.h"
#include "tscope/profile/input_verdict.h"
#include "tscope/profile/steps.h"
#include "tscope/profile/zone_recorder.h"

namespace tscope {
namespace {

using data::Batch;
using data::Loader;
using data::WorkerKind;

// Batch i: a 3-element float tensor filled with i, and an int64 scalar-like vector {i}.
Batch numbered_batch(std::int64_t index) {
  return {Tensor::full(DType::Float32, {3}, static_cast<double>(index)),
          Tensor::from_vector<std::int64_t>({1}, {index})};
}

std::vector<std::int64_t> drain(Loader& loader) {
  std::vector<std::int64_t> seen;
  while (std::optional<Batch> batch = loader.next()) {
    EXPECT_EQ(batch->size(), 2U);
    EXPECT_EQ((*batch)[0].at(2), static_cast<double>((*batch)[1].at(0)));
    seen.push_back(static_cast<std::int64_t>((*batch)[1].at(0)));
  }
  return seen;
}

std::vector<std::int64_t> iota(std::int64_t count) {
  std::vector<std::int64_t> values;
  for (std::int64_t i = 0; i < count; ++i) values.push_back(i);
  return values;
}

// No child of this test process is left unreaped.
void expect_no_children() {
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

class LoaderKinds : public ::testing::TestWithParam<WorkerKind> {};

TEST_P(LoaderKinds, DeliverEveryBatchInOrderOverEpochs) {
  Loader loader(11, numbered_batch, {.workers = 3, .worker_kind = GetParam(), .prefetch = 2});
  for (int epoch = 0; epoch < 2; ++epoch) {
    loader.start_epoch();
    EXPECT_EQ(drain(loader), iota(11));
    EXPECT_FALSE(loader.next().has_value());
  }
  loader.stop();
  expect_no_children();
}

TEST_P(LoaderKinds, NameTheWorkerAndBatchOfAFailure) {
  Loader loader(8,
                [](std::int64_t index) {
                  if (index == 5) throw Error(ErrorKind::ShapeMismatch, "atoms and radii disagree");
                  return numbered_batch(index);
                },
                {.workers = 2, .worker_kind = GetParam(), .name = "molecules"});
  loader.start_epoch();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(loader.next().has_value());
  try {
    (void)loader.next();
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(error.message().find("molecules"), std::string::npos) << error.message();
    EXPECT_NE(error.message().find("worker"), std::string::npos) << error.message();
    EXPECT_NE(error.message().find("batch 5: atoms and radii disagree"), std::string::npos)
        << error.message();
  }
  loader.stop();
  expect_no_children();
}

TEST_P(LoaderKinds, StopMidEpochAndStartAgain) {
  Loader loader(50, numbered_batch, {.workers = 2, .worker_kind = GetParam(), .prefetch = 1});
  loader.start_epoch();
  ASSERT_TRUE(loader.next().has_value());
  ASSERT_TRUE(loader.next().has_value());
  loader.start_epoch();  // stops the running epoch
  EXPECT_EQ(drain(loader), iota(50));
  loader.stop();
  expect_no_children();
}

INSTANTIATE_TEST_SUITE_P(Workers,
                         LoaderKinds,
                         ::testing::Values(WorkerKind::Thread, WorkerKind::Process),
                         [](const auto& info) {
                           return info.param == WorkerKind::Thread ? "Threads" : "Processes";
                         });

TEST(Loader, WithoutWorkersMakesBatchesOnTheCallersThread) {
  const std::thread::id caller = std::this_thread::get_id();
  Loader loader(4, [&](std::int64_t index) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    return numbered_batch(index);
  });
  loader.start_epoch();
  EXPECT_EQ(drain(loader), iota(4));
}

TEST(Loader, AKilledWorkerProcessIsAnErrorNamingIt) {
  Loader loader(9,
                [](std::int64_t index) {
                  if (index == 4) ::raise(SIGKILL);  // runs in worker 1 (batches 1, 4, 7)
                  return numbered_batch(index);
                },
                {.workers = 3, .worker_kind = WorkerKind::Process, .name = "voxels"});
  loader.start_epoch();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(loader.next().has_value());
  try {
    (void)loader.next();
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Io);
    EXPECT_NE(error.message().find("voxels: worker process 1"), std::string::npos)
        << error.message();
    EXPECT_NE(error.message().find("killed by signal 9"), std::string::npos) << error.message();
    EXPECT_NE(error.message().find("before making batch 4"), std::string::npos) << error.message();
  }
  loader.stop();
  expect_no_children();
}

TEST(Loader, RejectsBadSettings) {
  EXPECT_THROW(Loader(-1, numbered_batch), Error);
  EXPECT_THROW(Loader(3, numbered_batch, {.workers = -2}), Error);
  EXPECT_THROW(Loader(3, numbered_batch, {.prefetch = 0}), Error);
  EXPECT_THROW(Loader(3, data::MakeBatch{}), Error);
  Loader loader(3, numbered_batch);
  EXPECT_THROW((void)loader.next(), Error);  // before start_epoch
}

class ProfiledLoader : public ::testing::Test {
 protected:
  void SetUp() override {
    profile::reset_host_zones();
    profile::set_zones_enabled(true);
  }
  void TearDown() override {
    profile::set_zones_enabled(false);
    profile::reset_host_zones();
  }
};

TEST_F(ProfiledLoader, CountsBatchesTakesAndOccupancy) {
  for (const WorkerKind kind : {WorkerKind::Thread, WorkerKind::Process}) {
    profile::reset_host_zones();
    Loader loader(10, numbered_batch, {.workers = 2, .worker_kind = kind, .prefetch = 3});
    for (int epoch = 0; epoch < 2; ++epoch) {
      loader.start_epoch();
      EXPECT_EQ(drain(loader), iota(10));
    }
    loader.stop();
    const profile::HostRecord host = profile::snapshot_host_zones();
    ASSERT_EQ(host.data_sources.size(), 1U);
    const profile::DataSourceRecord& source = host.data_sources[0];
    EXPECT_EQ(source.worker_kind, kind == WorkerKind::Thread ? "thread" : "process");
    EXPECT_EQ(source.queue_capacity, 6);
    EXPECT_EQ(source.batches_taken, 20);
    ASSERT_EQ(source.occupancy.size(), 7U);
    std::int64_t takes = 0;
    for (const std::int64_t count : source.occupancy) takes += count;
    EXPECT_EQ(takes, 20);
    ASSERT_EQ(source.workers.size(), 2U);
    EXPECT_EQ(source.workers[0].batches + source.workers[1].batches, 20);
    for (const profile::DataWorkerRecord& worker : source.workers) {
      EXPECT_GT(worker.os_id, 0);
      EXPECT_GE(worker.lifetime_ns, worker.busy_ns);
    }
  }
}

// A pipeline with sleeps standing in for work: `make_ms` per batch (worker `slow_worker`, if any,
// takes `slow_ms`), `step_ms` per training step. Returns the verdict of its profile.
profile::InputVerdict run_pipeline(
    int workers, int make_ms, int step_ms, int slow_worker = -1, int slow_ms = 0) {
  profile::reset_host_zones();
  constexpr int kBatches = 12;
  Loader loader(kBatches,
                [=](std::int64_t index) {
                  const bool slow = workers > 0 && index % workers == slow_worker;
                  std::this_thread::sleep_for(std::chrono::milliseconds(slow ? slow_ms : make_ms));
                  return numbered_batch(index);
                },
                {.workers = workers, .prefetch = 2});
  profile::mark_epoch(0);
  loader.start_epoch();
  while (std::optional<Batch> batch = loader.next()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(step_ms));
    profile::mark_step(4);
  }
  return profile::compute_input_verdict(profile::snapshot_host_zones());
}

TEST_F(ProfiledLoader, SlowDataIsHighlyInputBound) {
  const profile::InputVerdict verdict = run_pipeline(1, 30, 2);
  EXPECT_EQ(verdict.level, profile::InputBound::Highly) << verdict.wait_share;
  EXPECT_GT(verdict.wait_share, 0.6);
  ASSERT_EQ(verdict.sources.size(), 1U);
  EXPECT_GE(verdict.sources[0].workers_needed, 5);  // 30 ms per batch, about 2-3 ms per step
}

TEST_F(ProfiledLoader, ASlowStepIsNotInputBound) {
  // The first batch of the epoch is the only wait: 2 ms of 12 x 60 ms.
  const profile::InputVerdict verdict = run_pipeline(2, 2, 60);
  EXPECT_EQ(verdict.level, profile::InputBound::Not) << verdict.wait_share;
  ASSERT_EQ(verdict.sources.size(), 1U);
  EXPECT_EQ(verdict.sources[0].workers_needed, 1);
  EXPECT_LT(verdict.sources[0].empty_share, 0.5);  // the workers stay ahead after the start
}

TEST_F(ProfiledLoader, OneSlowWorkerMakesItInputBoundAndShowsInItsUtilisation) {
  // Worker 1 takes 60 ms per batch, worker 0 1 ms, a step 10 ms: every other batch is late.
  const profile::InputVerdict verdict = run_pipeline(2, 1, 10, 1, 60);
  EXPECT_EQ(verdict.level, profile::InputBound::Highly) << verdict.wait_share;
  ASSERT_EQ(verdict.sources.size(), 1U);
  ASSERT_EQ(verdict.sources[0].utilisation.size(), 2U);
  EXPECT_GT(verdict.sources[0].utilisation[1], 0.8);
  EXPECT_LT(verdict.sources[0].utilisation[0], 0.3);
}

}  // namespace
}  // namespace tscope
