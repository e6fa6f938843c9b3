// SPDX-License-Identifier: Apache-2.0
// Worker processes of a Loader. Each epoch forks N children; child w makes its batches and writes
// them to its own pipe (batch_wire.h). In the parent, one reader thread per child moves messages
// from the pipe into the child's queue, so the bounded queue (and, behind it, the pipe) holds the
// child back when the consumer falls behind. The children are forked before the reader threads
// start, so a child inherits no thread of this loader.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <thread>

#include "batch_wire.h"
#include "tscope/core/error.h"
#include "tscope/profile/worker_processes.h"
#include "tscope/profile/zone_recorder.h"
#include "tscope/profile/zones.h"
#include "workers.h"

namespace tscope::data {
namespace {

// How long a stopped child may take to notice before it is killed.
constexpr int kStopGraceMs = 2000;

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       ::strsignal(WTERMSIG(status)));
  }
  return "ended";
}

// The child's whole life: make the batches w, w + N, ... and send them; never returns.
[[noreturn]] void run_child(
    int w, int count, std::int64_t batch_count, const MakeBatch& make_batch, int fd) {
  // A parent that stopped reading closes the pipe: the write then fails (EPIPE) and the child
  // ends normally, instead of being killed by SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  int status = 0;
  for (std::int64_t index = w; index < batch_count; index += count) {
    WireMessage message{.index = index};
    const std::int64_t start_ns = profile::zone_clock_ns();
    try {
      TSCOPE_ZONE("make batch");
      message.batch = make_batch(index);
    } catch (const Error& error) {
      message.failed = true;
      message.error_kind = error.kind();
      message.error_text = error.message();
    } catch (const std::exception& error) {
      message.failed = true;
      message.error_text = error.what();
    } catch (...) {
      message.failed = true;
      message.error_text = "unknown exception";
    }
    message.busy_ns = profile::zone_clock_ns() - start_ns;
    if (!write_message(fd, message)) break;  // the parent stopped reading
    if (message.failed) {
      status = 1;
      break;
    }
  }
  ::close(fd);
  profile::end_worker_process(status);  // writes its zones' shard when profiling
}

class ProcessWorkers final : public Loader::Workers {
 public:
  explicit ProcessWorkers(const WorkerSetup& setup)
      : Workers(setup.count, setup.prefetch, setup.stats), name_(setup.name) {
    const int count = setup.count;
    const std::int64_t batch_count = setup.batch_count;
    std::vector<int> read_fds;
    for (int w = 0; w < count; ++w) {
      int fds[2] = {-1, -1};
      if (::pipe2(fds, O_CLOEXEC) != 0) {
        abandon(read_fds);
        throw_error(ErrorKind::Io, "{}: could not create a pipe for worker {}: {}", name_, w,
                    std::strerror(errno));
      }
      std::fflush(nullptr);  // what the parent printed must not be printed again by the child
      const pid_t pid = ::fork();
      if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        abandon(read_fds);
        throw_error(ErrorKind::Io, "{}: could not fork worker {}: {}", name_, w,
                    std::strerror(errno));
      }
      if (pid == 0) {
        ::close(fds[0]);
        for (const int other : read_fds) ::close(other);  // so each pipe ends with its child
        run_child(w, count, batch_count, *setup.make_batch, fds[1]);
      }
      ::close(fds[1]);
      read_fds.push_back(fds[0]);
      pids_.push_back(pid);
      if (this->stats() != nullptr) this->stats()->worker_started(w, pid);
    }
    for (int w = 0; w < count; ++w) {
      readers_.emplace_back(
          [this, w, count, batch_count, fd = read_fds[static_cast<std::size_t>(w)]] {
            read_batches(w, count, batch_count, fd);
          });
    }
  }
  ~ProcessWorkers() override { stop(); }
  ProcessWorkers(const ProcessWorkers&) = delete;
  ProcessWorkers& operator=(const ProcessWorkers&) = delete;

  void stop() override {
    stop_queues();
    for (const pid_t pid : pids_) {
      if (pid > 0) ::kill(pid, SIGTERM);
    }
    for (std::thread& reader : readers_) {
      if (reader.joinable()) reader.join();
    }
  }

 private:
  // Moves worker w's messages into its queue until its last batch, the end of the pipe or stop.
  void read_batches(int w, int count, std::int64_t batch_count, int fd) {
    const std::string source =
        fmt::format("{}: worker process {} (pid {})", name_, w, pids_[static_cast<std::size_t>(w)]);
    std::exception_ptr ended;
    std::int64_t expected = w;
    try {
      while (expected < batch_count) {
        if (!queue(w).wait_for_room()) break;
        std::optional<WireMessage> message = read_message(fd, source);
        if (!message) break;
        if (stats() != nullptr) stats()->batch_produced(w, message->busy_ns);
        std::exception_ptr error;
        if (message->failed) {
          error = std::make_exception_ptr(
              Error(message->error_kind, fmt::format("{} failed making batch {}: {}", source,
                                                     message->index, message->error_text)));
        }
        // Moved, not copied: only the consumer keeps a reference to the error.
        const bool failed = error != nullptr;
        queue(w).push(message->index, std::move(message->batch), std::move(error));
        expected += count;
        if (failed) break;
      }
    } catch (...) {
      ended = std::current_exception();
    }
    ::close(fd);
    const int status = reap(w);
    if (stats() != nullptr) stats()->worker_stopped(w);
    if (!ended && expected < batch_count) {
      ended = std::make_exception_ptr(Error(
          ErrorKind::Io,
          fmt::format("{} {} before making batch {}", source, describe_status(status), expected)));
    }
    queue(w).close(std::move(ended));
  }

  // Waits for child w, killing it when it does not end within the grace period.
  int reap(int w) {
    const pid_t pid = pids_[static_cast<std::size_t>(w)];
    int status = 0;
    for (int waited_ms = 0;; waited_ms += 10) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid || (done < 0 && errno != EINTR)) return status;
      if (waited_ms == kStopGraceMs) ::kill(pid, SIGKILL);
      ::usleep(10'000);
    }
  }

  // Construction failed part way: the children forked so far are ended and reaped.
  void abandon(const std::vector<int>& read_fds) {
    for (const int fd : read_fds) ::close(fd);  // each child's next write fails: it ends
    for (std::size_t w = 0; w < pids_.size(); ++w) {
      ::kill(pids_[w], SIGTERM);
      reap(static_cast<int>(w));
    }
  }

  std::string name_;
  std::vector<pid_t> pids_;
  std::vector<std::thread> readers_;
};

}  // namespace

std::unique_ptr<Loader::Workers> start_process_workers(const WorkerSetup& setup) {
  return std::make_unique<ProcessWorkers>(setup);
}

}  // namespace tscope::data
