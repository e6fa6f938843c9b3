// SPDX-License-Identifier: Apache-2.0
// This process's role in a run with worker processes (worker_processes.h, worker_processes_impl.h)
// and the markers workers leave in the shard directory (process_shards.h).
#include "tscope/profile/worker_processes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>

#include "tscope/profile/global_profiles.h"
#include "tscope/profile/process_shards.h"
#include "tscope/profile/zone_recorder.h"
#include "worker_processes_impl.h"

namespace tscope::profile {
namespace detail {
namespace {

// The exit handler's status for a profile that could not be written (global_profiles.cpp).
constexpr int kExitProfileNotWritten = 3;

std::int64_t read_clock_ns(clockid_t clock) noexcept {
  timespec now{};
  ::clock_gettime(clock, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

// Text built without allocating, for the fork child.
class FixedText {
 public:
  void add(const char* text) noexcept {
    while (*text != '\0') put(*text++);
  }
  void add(std::int64_t value) noexcept {
    char digits[24];
    int count = 0;
    const bool negative = value < 0;
    // Negated digit by digit, so that INT64_MIN does not overflow.
    do {
      const std::int64_t digit = value % 10;
      digits[count++] = static_cast<char>('0' + (negative ? -digit : digit));
      value /= 10;
    } while (value != 0);
    if (negative) put('-');
    while (count > 0) put(digits[--count]);
  }
  void add_line(const char* key, std::int64_t value) noexcept {
    add(key);
    put(' ');
    add(value);
    put('\n');
  }
  [[nodiscard]] const char* c_str() noexcept {
    data_[std::min(size_, sizeof(data_) - 1)] = '\0';
    return data_;
  }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool overflowed() const noexcept { return size_ >= sizeof(data_); }

 private:
  void put(char c) noexcept {
    if (size_ < sizeof(data_) - 1) data_[size_] = c;
    ++size_;
  }
  char data_[PATH_MAX + 64] = {};
  std::size_t size_ = 0;
};

struct Role {
  std::mutex mutex;  // the strings; held from prepare_worker_fork to the end of the fork
  std::atomic<bool> worker{false};
  bool forked = false;
  std::int64_t root_pid = 0;
  std::int64_t parent_pid = 0;
  std::int64_t forking_pid = 0;  // set before fork(): the child's parent
  const char* label = "main";
  ClockPair start;
  std::int64_t start_boot_ns = 0;
  std::string directory;  // absolute; empty until handlers are installed
  // "<directory>/tscope-<root>-", laid out before fork() for the child's marker.
  FixedText marker_prefix;
};

Role& role() {
  // Leaked: the exit-time writer and the fork handlers use it during static destruction.
  static Role& instance = *new Role();
  return instance;
}

std::string absolute(const std::string& path) {
  if (path.starts_with('/')) return path;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr) return path;
  return std::string(cwd) + "/" + path;
}

std::string chosen_directory(const ProfileOptions& options) {
  if (!options.directory.empty()) return absolute(options.directory);
  if (options.destination != "stderr" && options.destination != "stdout") {
    return absolute(options.destination + ".workers");
  }
  return "/tmp/tscope-workers-" + std::to_string(::getpid());
}

// mkdir -p; errors are left to the writes that follow, which name the path.
void make_directories(const std::string& path) {
  for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = slash == std::string::npos ? path : path.substr(0, slash);
    ::mkdir(prefix.c_str(), 0755);
    if (slash == std::string::npos) return;
  }
}

// Written with open/write/close only: the fork child calls it.
void write_marker(const char* path, const Role& r, std::int64_t pid) noexcept {
  FixedText text;
  text.add("tscope-worker-started 1\n");
  text.add_line("pid", pid);
  text.add_line("parent_pid", r.parent_pid);
  text.add_line("root_pid", r.root_pid);
  text.add("label ");
  text.add(r.label);
  text.add("\n");
  text.add_line("start_zone_ns", r.start.zone_ns);
  text.add_line("start_monotonic_ns", r.start.monotonic_ns);
  text.add_line("start_boot_ns", r.start_boot_ns);
  if (text.overflowed()) return;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;  // the missing shard will say more: the directory is the same
  const char* data = text.c_str();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) break;
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  ::close(fd);
}

void mark_started(Role& r) noexcept {
  r.start = pair_clocks();
  r.start_boot_ns = read_clock_ns(CLOCK_BOOTTIME);
}

}  // namespace

ClockPair pair_clocks() noexcept {
  ClockPair best{.half_width_ns = -1};
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::int64_t before = read_clock_ns(CLOCK_MONOTONIC);
    const std::int64_t zone = zone_clock_ns();
    const std::int64_t after = read_clock_ns(CLOCK_MONOTONIC);
    const std::int64_t half_width = (after - before + 1) / 2;
    if (best.half_width_ns < 0 || half_width < best.half_width_ns) {
      best = {.monotonic_ns = before + (after - before) / 2,
              .zone_ns = zone,
              .half_width_ns = half_width};
    }
  }
  return best;
}

void start_process_role(const ProfileOptions& options) {
  Role& r = role();
  std::lock_guard lock(r.mutex);
  const std::optional<WorkerParent>& parent = inherited_worker_parent();
  const std::int64_t pid = ::getpid();
  if (parent && parent->pid != pid) {
    r.root_pid = parent->pid;
    r.parent_pid = ::getppid();
    r.label = "exec";
    r.directory = parent->directory;
    mark_started(r);
    make_directories(r.directory);
    write_marker((r.directory + "/" + worker_marker_name(r.root_pid, pid)).c_str(), r, pid);
    r.worker.store(true);
    return;
  }
  r.root_pid = pid;
  r.directory = chosen_directory(options);
  mark_started(r);
  export_worker_parent({.pid = pid, .directory = r.directory});
}

void update_worker_directory(const ProfileOptions& options) {
  Role& r = role();
  std::lock_guard lock(r.mutex);
  if (r.worker.load() || r.root_pid == 0) return;
  const std::string directory = chosen_directory(options);
  if (directory == r.directory) return;
  r.directory = directory;
  export_worker_parent({.pid = r.root_pid, .directory = r.directory});
}

void prepare_worker_fork() noexcept {
  Role& r = role();
  r.mutex.lock();
  r.forking_pid = ::getpid();
  r.marker_prefix = FixedText();
  if (r.directory.empty()) return;
  try {
    make_directories(r.directory);
  } catch (...) {
    return;  // no marker then; the worker's shard write reports the directory
  }
  r.marker_prefix.add(r.directory.c_str());
  r.marker_prefix.add("/tscope-");
  r.marker_prefix.add(r.root_pid);
  r.marker_prefix.add("-");
}

void after_worker_fork_in_parent() noexcept { role().mutex.unlock(); }

void become_forked_worker() noexcept {
  Role& r = role();
  const std::int64_t pid = ::getpid();
  r.parent_pid = r.forking_pid;
  r.label = "fork";
  r.forked = true;
  mark_started(r);
  r.worker.store(true);
  if (r.marker_prefix.size() > 0 && !r.marker_prefix.overflowed()) {
    FixedText path;
    path.add(r.marker_prefix.c_str());
    path.add(pid);
    path.add(".started");
    if (!path.overflowed()) write_marker(path.c_str(), r, pid);
  }
  r.mutex.unlock();
}

bool forked_worker() noexcept { return role().forked; }

std::string worker_directory() {
  Role& r = role();
  std::lock_guard lock(r.mutex);
  return r.directory;
}

std::int64_t worker_root_pid() noexcept { return role().root_pid; }

std::string own_shard_path() {
  return worker_directory() + "/" + worker_shard_name(worker_root_pid(), ::getpid());
}

ProcessRecord own_process_record(const HostRecord& host) {
  Role& r = role();
  const bool worker = r.worker.load();
  ProcessRecord record{.pid = ::getpid(),
                       .parent_pid = worker ? r.parent_pid : static_cast<std::int64_t>(::getppid()),
                       .label = worker ? r.label : "main",
                       .state = worker ? "worker" : "main"};
  const ClockPair end = pair_clocks();
  record.start_ns = r.start.zone_ns;
  record.end_ns = end.zone_ns;
  if (host.clock == "injected") {
    // The test clock is no real clock: it stands for the shared one, exactly.
    record.start_monotonic_ns = r.start.zone_ns;
    record.end_monotonic_ns = end.zone_ns;
    record.clock_error_ns = 0;
  } else {
    // Each end is placed on CLOCK_MONOTONIC by its own pairing; times between them by a straight
    // line through both, which absorbs the zone clock's drift from CLOCK_MONOTONIC (a tick rate
    // calibrated over a few milliseconds).
    record.start_monotonic_ns = r.start.monotonic_ns;
    record.end_monotonic_ns = end.monotonic_ns;
    record.clock_error_ns = std::max(r.start.half_width_ns, end.half_width_ns);
  }
  for (const ZoneThreadRecord& thread : host.threads) {
    for (const ZoneNodeRecord& node : thread.nodes) {
      if (node.parent < 0) record.busy_ns += node.total_ns;
    }
  }
  return record;
}

}  // namespace detail

bool is_worker_process() noexcept { return detail::role().worker.load(); }

void end_worker_process(int status) noexcept {
  if (is_worker_process() && !GlobalProfiles::instance().write_if_active() && status == 0) {
    status = detail::kExitProfileNotWritten;
  }
  ::_exit(status);
}

}  // namespace tscope::profile
