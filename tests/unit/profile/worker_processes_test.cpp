// SPDX-License-Identifier: Apache-2.0
// Worker processes (worker_processes.h): real children made by fork() (and one by exec of this
// binary) record zones, end by _exit, exit(), SIGTERM, an uncaught exception or SIGKILL, and the
// parent's profile merges their shards. The zone clock is injected (10 ns per read, per thread),
// so call counts are exact. Its own binary: the global profiles' handlers are installed in the
// parent, which then forks.
#include "tscope/profile/worker_processes.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/test_util.h"
#include "tscope/profile/atomic_file.h"
#include "tscope/profile/global_profiles.h"
#include "tscope/profile/json_export.h"
#include "tscope/profile/process_shards.h"
#include "tscope/profile/zone_recorder.h"
#include "tscope/profile/zones.h"
#include "zone_test_clock.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSCOPE_TEST_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TSCOPE_TEST_TSAN 1
#endif
#ifdef TSCOPE_TEST_TSAN
// The children start threads after a fork of a threaded parent (the signal watcher), which
// ThreadSanitizer stops by default; glibc supports it, and what is checked here is the recording.
extern "C" const char* __tsan_default_options() { return "die_after_fork=0"; }
#endif

extern char** environ;

namespace tscope {
namespace {

namespace fs = std::filesystem;

void inner() { TSCOPE_ZONE("inner"); }

void outer() {
  TSCOPE_ZONE("outer");
  inner();
  inner();
}

// `calls` outer zones on the calling thread and `per_thread` on each of `threads` more.
void run_zones(int calls, int threads, int per_thread) {
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([per_thread] {
      for (int i = 0; i < per_thread; ++i) outer();
    });
  }
  for (int i = 0; i < calls; ++i) outer();
  for (std::thread& worker : workers) worker.join();
}

std::int64_t calls_of(const profile::HostRecord& host, const std::string& name) {
  const profile::ZoneThreadRecord merged = profile::merge_zone_threads(host);
  for (const profile::ZoneTotals& totals : profile::zone_totals(merged)) {
    if (host.sites[static_cast<std::size_t>(totals.site)].name == name) return totals.call_count;
  }
  return 0;
}

const profile::ProcessRecord* process_of(const profile::HostRecord& host, pid_t pid) {
  for (const profile::ProcessRecord& process : host.processes) {
    if (process.pid == pid) return &process;
  }
  return nullptr;
}

void write_byte(int fd) {
  const char byte = 'r';
  if (::write(fd, &byte, 1) != 1) ::_exit(5);
}

bool read_byte(int fd) {
  char byte = 0;
  return ::read(fd, &byte, 1) == 1;
}

class WorkerProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = (fs::temp_directory_path() /
                  ("tscope_workers_" + std::to_string(::getpid()) + "_" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                     .string();
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    main_path_ = directory_ + "/main.json";
    profile::ProfileOptions options;
    options.profile = true;
    options.destination = main_path_;
    options.directory = directory_;
    profile::GlobalProfiles::instance().set_options(options);
    profile::set_zone_clock_for_testing(zone_test::per_thread_ticks);
    profile::reset_host_zones();
    profile::set_zones_enabled(true);
    profile::GlobalProfiles::instance().enable_host_zones();
  }

  void TearDown() override {
    profile::set_zones_enabled(false);
    profile::reset_host_zones();
    profile::set_zone_clock_for_testing(nullptr);
    // The exit-time writer still runs when the binary ends: somewhere harmless.
    profile::ProfileOptions options;
    options.profile = true;
    options.destination = "/dev/null";
    profile::GlobalProfiles::instance().set_options(options);
    fs::remove_all(directory_);
  }

  // Forks a child that runs `body` and then ends as `body` decides (it must not return).
  template <typename Body>
  pid_t fork_worker(Body body) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::alarm(60);  // never outlive a failed test
      body();
      ::_exit(4);  // the body should have ended the process
    }
    EXPECT_GT(pid, 0);
    return pid;
  }

  // The parent's profile, written now as at exit.
  profile::Profile write_parent_profile() {
    profile::GlobalProfiles::instance().write();
    const profile::ProfileDocument document =
        profile::parse_profile_json(profile::read_file(main_path_), main_path_);
    EXPECT_GE(document.profiles.size(), 1U);
    return document.profiles.empty() ? profile::Profile{} : document.profiles.front();
  }

  std::string shard_path(pid_t pid) const {
    return directory_ + "/" + profile::worker_shard_name(::getpid(), pid);
  }

  std::string directory_;
  std::string main_path_;
};

int wait_status(pid_t pid) {
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  return status;
}

void expect_exit_code(pid_t pid, int code) {
  const int status = wait_status(pid);
  EXPECT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), code);
}

TEST_F(WorkerProcesses, ThreeForkedWorkersAndTheirThreadsAddUpExactly) {
  run_zones(5, 0, 0);
  std::vector<pid_t> pids;
  for (int w = 0; w < 3; ++w) {
    pid_t pid = 0;
    {
      // Open while forking: the child leaves it too, and must not count it.
      TSCOPE_ZONE("forking");
      pid = ::fork();
      if (pid == 0) {
        ::alarm(60);
        run_zones(10 * (w + 1), 2, 7);
        if (w == 0) std::exit(0);  // exit handlers write the shard
      }
    }
    // The other two children get here, out of the scope the parent opened, and end here.
    if (pid == 0) profile::end_worker_process(0);
    ASSERT_GT(pid, 0);
    pids.push_back(pid);
  }
  for (pid_t pid : pids) expect_exit_code(pid, 0);
  for (pid_t pid : pids) EXPECT_TRUE(fs::exists(shard_path(pid))) << shard_path(pid);
  // No worker wrote the parent's report.
  EXPECT_FALSE(fs::exists(main_path_));

  const profile::Profile written = write_parent_profile();
  const profile::HostRecord& host = written.host;
  EXPECT_EQ(calls_of(host, "outer"), 5 + 10 + 20 + 30 + 3 * 2 * 7);
  EXPECT_EQ(calls_of(host, "inner"), 2 * calls_of(host, "outer"));
  EXPECT_EQ(calls_of(host, "forking"), 3);
  ASSERT_EQ(host.processes.size(), 4U);
  EXPECT_EQ(host.processes[0].state, "main");
  EXPECT_EQ(host.processes[0].pid, ::getpid());
  EXPECT_EQ(host.threads.size(), 1U + 3U * 3U);
  for (pid_t pid : pids) {
    const profile::ProcessRecord* process = process_of(host, pid);
    ASSERT_NE(process, nullptr) << pid;
    EXPECT_EQ(process->state, "merged");
    EXPECT_EQ(process->label, "fork");
    EXPECT_EQ(process->parent_pid, ::getpid());
    EXPECT_GT(process->busy_ns, 0);
    EXPECT_GT(process->end_ns, process->start_ns);
    EXPECT_EQ(process->clock_error_ns, 0);  // the injected clock is shared, nothing to align
  }
  for (const profile::ZoneThreadRecord& thread : host.threads) {
    const profile::ProcessRecord& process =
        host.processes.at(static_cast<std::size_t>(thread.process));
    if (process.state == "main") {
      EXPECT_EQ(thread.os_thread_id, ::getpid());
    }
  }
  const std::string text = profile::render_text(written);
  EXPECT_NE(text.find("Processes: 4 (worker processes: 3 merged)"), std::string::npos) << text;
}

TEST_F(WorkerProcesses, KilledWorkerIsMissingWhileTheOthersMerge) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  std::vector<pid_t> pids;
  for (int w = 0; w < 3; ++w) {
    pids.push_back(fork_worker([w, &ready] {
      run_zones(4, 1, 3);
      write_byte(ready[1]);
      if (w == 2) {
        for (;;) ::pause();  // until killed
      }
      profile::end_worker_process(0);
    }));
  }
  for (int w = 0; w < 3; ++w) ASSERT_TRUE(read_byte(ready[0]));
  ::close(ready[0]);
  ::close(ready[1]);
  ASSERT_EQ(::kill(pids[2], SIGKILL), 0);
  const int killed = wait_status(pids[2]);
  EXPECT_TRUE(WIFSIGNALED(killed) && WTERMSIG(killed) == SIGKILL);
  expect_exit_code(pids[0], 0);
  expect_exit_code(pids[1], 0);

  const profile::Profile written = write_parent_profile();
  EXPECT_EQ(calls_of(written.host, "outer"), 2 * (4 + 3));
  ASSERT_NE(process_of(written.host, pids[2]), nullptr);
  EXPECT_EQ(process_of(written.host, pids[2])->state, "missing");
  EXPECT_EQ(process_of(written.host, pids[0])->state, "merged");
  EXPECT_EQ(process_of(written.host, pids[1])->state, "merged");
  const std::string text = profile::render_text(written);
  const std::string line =
      "worker " + std::to_string(pids[2]) + ": missing \u2014 started, no shard (killed?)";
  EXPECT_NE(text.find(line), std::string::npos) << text;
}

TEST_F(WorkerProcesses, RunningWorkerIsListedThenMergedByTheDirectoryReport) {
  int go[2];
  int ready[2];
  ASSERT_EQ(::pipe(go), 0);
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = fork_worker([&] {
    ::close(go[1]);
    run_zones(6, 0, 0);
    write_byte(ready[1]);
    (void)read_byte(go[0]);  // until the parent has written its profile
    profile::end_worker_process(0);
  });
  ::close(go[0]);
  ASSERT_TRUE(read_byte(ready[0]));
  const profile::Profile written = write_parent_profile();
  ASSERT_NE(process_of(written.host, pid), nullptr);
  EXPECT_EQ(process_of(written.host, pid)->state, "running");
  EXPECT_EQ(calls_of(written.host, "outer"), 0);

  ::close(go[1]);
  expect_exit_code(pid, 0);
  // Afterwards, the directory holds the parent's report and the shard: merged into one.
  const profile::ProfileDocument merged = profile::read_shard_directory(directory_);
  ASSERT_FALSE(merged.profiles.empty());
  const profile::HostRecord& host = merged.profiles.front().host;
  ASSERT_NE(process_of(host, pid), nullptr);
  EXPECT_EQ(process_of(host, pid)->state, "merged");
  EXPECT_EQ(host.processes.size(), 2U);
  EXPECT_EQ(calls_of(host, "outer"), 6);
}

TEST_F(WorkerProcesses, WorkerEndedBySigtermWritesItsShardAndDiesOfIt) {
#ifdef TSCOPE_TEST_TSAN
  // ThreadSanitizer delivers signals through its own runtime, which does not run in the signal
  // watcher thread that a fork child starts: the child never sees SIGTERM. The release and
  // sanitizer (ASan) builds run this test.
  GTEST_SKIP() << "signals in a fork child's new threads are not delivered under ThreadSanitizer";
#endif
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = fork_worker([&] {
    run_zones(3, 1, 2);
    write_byte(ready[1]);
    for (;;) ::pause();
  });
  ASSERT_TRUE(read_byte(ready[0]));
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  const int status = wait_status(pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  ASSERT_TRUE(fs::exists(shard_path(pid)));
  const profile::ProfileDocument shard =
      profile::parse_profile_json(profile::read_file(shard_path(pid)), shard_path(pid));
  ASSERT_EQ(shard.profiles.size(), 1U);
  EXPECT_EQ(calls_of(shard.profiles[0].host, "outer"), 5);
  ASSERT_EQ(shard.profiles[0].host.processes.size(), 1U);
  EXPECT_EQ(shard.profiles[0].host.processes[0].state, "worker");
  // The signal went to the worker alone: the parent wrote nothing.
  EXPECT_FALSE(fs::exists(main_path_));
}

TEST_F(WorkerProcesses, WorkerEndedByAnUncaughtExceptionWritesItsShard) {
  const pid_t pid = fork_worker([] {
    run_zones(2, 0, 0);
    std::thread([] { throw std::runtime_error("a worker's uncaught error"); }).join();
  });
  const int status = wait_status(pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGABRT);
  const profile::Profile written = write_parent_profile();
  ASSERT_NE(process_of(written.host, pid), nullptr);
  EXPECT_EQ(process_of(written.host, pid)->state, "merged");
  EXPECT_EQ(calls_of(written.host, "outer"), 2);
}

TEST_F(WorkerProcesses, ParentReportIsNeverOverwrittenByAWorker) {
  run_zones(1, 0, 0);
  profile::GlobalProfiles::instance().write();
  const std::string before = profile::read_file(main_path_);
  const pid_t pid = fork_worker([] {
    run_zones(3, 0, 0);
    std::exit(0);
  });
  expect_exit_code(pid, 0);
  EXPECT_EQ(profile::read_file(main_path_), before);
  EXPECT_TRUE(fs::exists(shard_path(pid)));
}

std::int64_t monotonic_now_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

struct Pairing {
  std::int64_t monotonic_ns = 0;
  std::int64_t zone_ns = 0;
  std::int64_t half_width_ns = -1;
};

// The zone clock read between two CLOCK_MONOTONIC reads, the best of a few, as the library does.
Pairing pair_clocks_here() {
  Pairing best;
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::int64_t first = monotonic_now_ns();
    const std::int64_t zone = profile::zone_clock_ns();
    const std::int64_t second = monotonic_now_ns();
    if (best.half_width_ns < 0 || (second - first + 1) / 2 < best.half_width_ns) {
      best = {first + (second - first) / 2, zone, (second - first + 1) / 2};
    }
  }
  return best;
}

// The parent's zone clock at a CLOCK_MONOTONIC time, on the line through two pairings.
std::int64_t parent_zone_at(const Pairing& a, const Pairing& b, std::int64_t monotonic_ns) {
  const long double slope = static_cast<long double>(b.zone_ns - a.zone_ns) /
                            static_cast<long double>(b.monotonic_ns - a.monotonic_ns);
  return a.zone_ns + static_cast<std::int64_t>(slope * (monotonic_ns - a.monotonic_ns));
}

TEST_F(WorkerProcesses, WorkerClockAlignsWithTheParentsWithinTheStatedBound) {
  profile::set_zone_clock_for_testing(nullptr);
  profile::set_zones_enabled(true);  // the measured tick source (rdtsc or steady_clock)
  const Pairing before = pair_clocks_here();
  const pid_t pid = fork_worker([] {
    run_zones(100, 0, 0);
    ::usleep(20'000);
    profile::end_worker_process(0);
  });
  expect_exit_code(pid, 0);
  const Pairing after = pair_clocks_here();

  const profile::ProfileDocument shard =
      profile::parse_profile_json(profile::read_file(shard_path(pid)), shard_path(pid));
  const profile::HostRecord& host = shard.profiles.at(0).host;
  EXPECT_NE(host.clock, "injected");
  ASSERT_EQ(host.processes.size(), 1U);
  const profile::ProcessRecord& worker = host.processes[0];
  EXPECT_LE(before.monotonic_ns, worker.start_monotonic_ns);
  EXPECT_LT(worker.start_monotonic_ns, worker.end_monotonic_ns);
  EXPECT_LE(worker.end_monotonic_ns, after.monotonic_ns);
  EXPECT_GE(worker.clock_error_ns, 0);
  // The worker's start and end, placed on the parent's zone clock as the merge places them,
  // against the worker's own readings of the same instants: the alignment error.
  const std::int64_t start_error_ns =
      std::abs(parent_zone_at(before, after, worker.start_monotonic_ns) - worker.start_ns);
  const std::int64_t end_error_ns =
      std::abs(parent_zone_at(before, after, worker.end_monotonic_ns) - worker.end_ns);
  const std::int64_t bound_ns =
      worker.clock_error_ns + std::max(before.half_width_ns, after.half_width_ns);
  std::printf(
      "zone clock %s: stated bound %lld ns (worker %lld, parent %lld); measured error at "
      "start %lld ns, at end %lld ns\n",
      host.clock.c_str(), static_cast<long long>(bound_ns),
      static_cast<long long>(worker.clock_error_ns),
      static_cast<long long>(std::max(before.half_width_ns, after.half_width_ns)),
      static_cast<long long>(start_error_ns), static_cast<long long>(end_error_ns));
  EXPECT_LE(bound_ns, 10'000);
  EXPECT_LE(std::max(start_error_ns, end_error_ns), bound_ns);
}

TEST(WorkerProcessFlags, DirectoryIsCheckedWhenTheFlagsAreRead) {
  const profile::ProfileOptions options =
      profile::parse_flags("profile=true,profiling.directory=/nonexistent-dir/shards");
  EXPECT_EQ(options.directory, "/nonexistent-dir/shards");
  try {
    profile::check_destination(options);
    ADD_FAILURE() << "a directory that cannot be made was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::BadFlag);
    EXPECT_NE(error.message().find("profiling.directory=/nonexistent-dir/shards: cannot be "
                                   "created, its parent directory '/nonexistent-dir' does not "
                                   "exist"),
              std::string::npos)
        << error.message();
  }
  EXPECT_THROW((void)profile::parse_flags("profiling.directory="), Error);
}

profile::Profile two_process_profile() {
  profile::Profile result;
  result.title = "Host zones";
  profile::HostRecord& host = result.host;
  host.clock = "injected";
  host.sites = {{.name = "load", .function = "load", .file = "a.cpp", .line = 3, .kind = "zone"}};
  host.processes = {
      {.pid = 100,
       .parent_pid = 1,
       .label = "main",
       .state = "main",
       .start_ns = 10,
       .end_ns = 910,
       .start_monotonic_ns = 10,
       .end_monotonic_ns = 910,
       .clock_error_ns = 0,
       .busy_ns = 300},
      {.pid = 101,
       .parent_pid = 100,
       .label = "fork",
       .state = "merged",
       .start_ns = 20,
       .end_ns = 520,
       .start_monotonic_ns = 20,
       .end_monotonic_ns = 520,
       .clock_error_ns = 0,
       .busy_ns = 400},
      {.pid = 102, .parent_pid = 100, .label = "fork", .state = "missing", .start_ns = 30}};
  for (std::int64_t process = 0; process < 2; ++process) {
    profile::ZoneThreadRecord thread{
        .thread_index = 0, .os_thread_id = 100 + process, .name = "main"};
    thread.nodes = {{.site = 0,
                     .parent = -1,
                     .call_count = 3,
                     .total_ns = 300 + 100 * process,
                     .self_ns = 300 + 100 * process}};
    thread.process = process;
    host.threads.push_back(thread);
  }
  return result;
}

TEST(WorkerProcessReport, ProcessesRoundTripThroughJsonAndRender) {
  const profile::Profile original = two_process_profile();
  const std::string json = profile::to_json_text({original}, {});
  const profile::ProfileDocument document = profile::parse_profile_json(json, "two processes");
  ASSERT_EQ(document.profiles.size(), 1U);
  const profile::HostRecord& host = document.profiles[0].host;
  ASSERT_EQ(host.processes.size(), 3U);
  EXPECT_EQ(host.processes[1].pid, 101);
  EXPECT_EQ(host.processes[1].end_monotonic_ns, 520);
  EXPECT_EQ(host.processes[2].state, "missing");
  EXPECT_EQ(host.threads[1].process, 1);
  const std::string text = profile::render_text(document.profiles[0]);
  EXPECT_EQ(text, profile::render_text(original));
  EXPECT_NE(text.find("  Processes: 3 (worker processes: 1 merged, 1 missing)"), std::string::npos)
      << text;
  // busy 400 of a 500 ns life; the missing worker has neither.
  EXPECT_NE(text.find("     101      100  fork   merged          1           3      0.000s      "
                      "0.000s      0.000s  0.0 us\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  worker 102: missing \u2014 started, no shard (killed?)\n"),
            std::string::npos);
  // Threads name their process.
  EXPECT_NE(text.find("         101         0      101"), std::string::npos) << text;
}

TEST(WorkerProcessReport, ThreadOfAnUnlistedProcessIsAParseError) {
  profile::Profile broken = two_process_profile();
  broken.host.threads[1].process = 3;
  const std::string json = profile::to_json_text({broken}, {});
  try {
    (void)profile::parse_profile_json(json, "broken");
    ADD_FAILURE() << "accepted";
  } catch (const Error& error) {
    EXPECT_NE(error.message().find("(/profiles/0/host/threads/1/process) 3 is out of range"),
              std::string::npos)
        << error.message();
  }
}

TEST(WorkerProcessReport, SumOfProfilesKeepsEachSidesProcesses) {
  const profile::Profile one = two_process_profile();
  const profile::HostRecord merged = profile::merge_host_records(one.host, one.host);
  ASSERT_EQ(merged.processes.size(), 6U);
  ASSERT_EQ(merged.threads.size(), 4U);
  EXPECT_EQ(merged.threads[2].process, 3);
  EXPECT_EQ(merged.threads[3].process, 4);
  EXPECT_EQ(merged.processes[4].pid, 101);
  // A side without processes stands for one process of its own.
  profile::HostRecord single = one.host;
  single.processes.clear();
  for (profile::ZoneThreadRecord& thread : single.threads) thread.process = 0;
  const profile::HostRecord mixed = profile::merge_host_records(single, one.host);
  ASSERT_EQ(mixed.processes.size(), 4U);
  EXPECT_EQ(mixed.processes[0].state, "main");
  EXPECT_EQ(mixed.threads[0].process, 0);
  EXPECT_EQ(mixed.threads[2].process, 1);
  EXPECT_EQ(mixed.threads[3].process, 2);
}

// Run by ExecedChildOfThisBinaryWritesAShard, in a child started by exec with profiling on; a
// plain run of the test binary skips it.
TEST(WorkerExecHelper, RecordsZonesAsAWorker) {
  const char* helper = std::getenv("TSCOPE_TEST_EXEC_WORKER");
  if (helper == nullptr) GTEST_SKIP() << "run as the exec'd worker only";
  for (int i = 0; i < 4; ++i) {
    TSCOPE_ZONE("exec work");
  }
  EXPECT_TRUE(profile::is_worker_process());
}

TEST_F(WorkerProcesses, ExecedChildOfThisBinaryWritesAShard) {
  std::vector<std::string> variables;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "TSCOPE_FLAGS=", 13) != 0) variables.emplace_back(*entry);
  }
  variables.push_back("TSCOPE_FLAGS=profile=true,profiling.destination=" + main_path_);
  variables.push_back("TSCOPE_TEST_EXEC_WORKER=1");
  std::vector<char*> envp;
  for (std::string& variable : variables) envp.push_back(variable.data());
  envp.push_back(nullptr);
  std::string filter = "--gtest_filter=WorkerExecHelper.RecordsZonesAsAWorker";
  std::string self = "/proc/self/exe";
  std::vector<char*> argv = {self.data(), filter.data(), nullptr};
  const pid_t pid = fork_worker([&] {
    ::execve(self.c_str(), argv.data(), envp.data());
    ::_exit(6);
  });
  expect_exit_code(pid, 0);
  EXPECT_FALSE(fs::exists(main_path_));
  const profile::Profile written = write_parent_profile();
  const profile::ProcessRecord* process = process_of(written.host, pid);
  ASSERT_NE(process, nullptr);
  EXPECT_EQ(process->state, "merged");
  EXPECT_EQ(process->label, "exec");
  EXPECT_EQ(calls_of(written.host, "exec work"), 4);
}

}  // namespace
}  // namespace tscope
