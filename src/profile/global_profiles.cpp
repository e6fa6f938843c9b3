// SPDX-License-Identifier: Apache-2.0
#include "tscope/profile/global_profiles.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>

#include "tscope/core/error.h"
#include "tscope/profile/atomic_file.h"
#include "tscope/profile/json_export.h"
#include "tscope/profile/min_peak_search.h"
#include "tscope/profile/process_shards.h"
#include "tscope/profile/report_folded.h"
#include "tscope/profile/report_html.h"
#include "tscope/profile/report_text.h"
#include "tscope/profile/trace_recorder.h"
#include "tscope/profile/worker_processes.h"
#include "tscope/profile/zone_recorder.h"
#include "worker_processes_impl.h"

namespace tscope::profile {
namespace {

std::atomic<std::int64_t> g_call_count{0};
// Written before the handlers are installed and again in a fork child (a pipe of its own), read
// by the handler.
std::atomic<int> g_signal_pipe_write{-1};
int g_signal_pipe_read = -1;
struct sigaction g_previous_int {};
struct sigaction g_previous_term {};
std::terminate_handler g_previous_terminate = nullptr;
// The forking thread's signal mask, from before fork() to the end of the fork handlers.
sigset_t g_mask_before_fork;

extern "C" void on_terminating_signal(int signal_number) {
  // Only async-signal-safe work here: hand the signal number to the watcher thread.
  const int saved_errno = errno;
  const auto byte = static_cast<unsigned char>(signal_number);
  [[maybe_unused]] const ssize_t written =
      ::write(g_signal_pipe_write.load(std::memory_order_relaxed), &byte, 1);
  errno = saved_errno;
}

void watch_signals(int read_fd) {
  for (;;) {
    unsigned char byte = 0;
    const ssize_t got = ::read(read_fd, &byte, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got != 1) return;
    const int signal_number = byte;
    GlobalProfiles::instance().write_if_active();
    const struct sigaction& previous = signal_number == SIGINT ? g_previous_int : g_previous_term;
    ::sigaction(signal_number, &previous, nullptr);
    if (previous.sa_handler == SIG_IGN) continue;  // the program chose to ignore it
    ::kill(::getpid(), signal_number);
    return;
  }
}

// A worker that ends by an uncaught exception still leaves its shard; then the usual terminate
// handler runs (the message, abort()).
[[noreturn]] void write_then_terminate() {
  (void)GlobalProfiles::instance().write_if_active();
  if (g_previous_terminate != nullptr) g_previous_terminate();
  std::abort();
}

void terminate_through_writer() {
  const std::terminate_handler previous = std::set_terminate(write_then_terminate);
  if (previous != write_then_terminate) g_previous_terminate = previous;
}

// fork() copies only the forking thread: the child has no watcher, and the pipe it inherited
// leads to the parent's. A signal to the child would make the parent write its profile and die,
// and the child itself would ignore SIGTERM. So the child gets a pipe and a watcher of its own.
void restart_signal_watcher() noexcept {
  const int old_read = g_signal_pipe_read;
  const int old_write = g_signal_pipe_write.load(std::memory_order_relaxed);
  if (old_write < 0) return;  // signals were never handled here
  int fds[2] = {-1, -1};
  bool started = ::pipe2(fds, O_CLOEXEC) == 0;
  if (started) {
    try {
      std::thread(watch_signals, fds[0]).detach();
    } catch (...) {
      started = false;
      ::close(fds[0]);
      ::close(fds[1]);
    }
  }
  if (started) {
    g_signal_pipe_read = fds[0];
    g_signal_pipe_write.store(fds[1], std::memory_order_relaxed);
  } else {
    // No watcher: the signals end the child as they would without the profiler.
    ::sigaction(SIGINT, &g_previous_int, nullptr);
    ::sigaction(SIGTERM, &g_previous_term, nullptr);
    g_signal_pipe_write.store(-1, std::memory_order_relaxed);
  }
  ::close(old_read);
  ::close(old_write);
}

// The exit code a process gets when its profile could not be written at exit: the CLI's code for
// ErrorKind::Io (docs/error_handling.md), so that a lost profile is not a silent success.
constexpr int kExitProfileNotWritten = 3;

void write_at_exit() {
  if (GlobalProfiles::instance().write_if_active()) return;
  // exit() is already running, so only _Exit can change the status; flush what the program printed
  // first, since _Exit skips the stdio flush that would follow.
  std::fflush(nullptr);
  std::_Exit(kExitProfileNotWritten);
}

bool profile_ran(const Profile& profile) {
  for (const FunctionRecord& function : profile.functions) {
    if (function.call_count > 0 || function.compile.total_ns > 1'000'000'000) return true;
  }
  return false;
}

std::int64_t cost_ns(const Profile& profile) {
  std::int64_t total_ns = 0;
  for (const FunctionRecord& function : profile.functions) {
    total_ns += function.compile.total_ns + function.call_ns;
  }
  return total_ns;
}

}  // namespace

std::string sum_title(std::size_t count) {
  return fmt::format("Sum of all({}) printed profiles at exit.", count);
}

GlobalProfiles& GlobalProfiles::instance() {
  // Leaked on purpose: exit handlers and the watcher thread may use it during static destruction.
  static GlobalProfiles* registry = new GlobalProfiles();
  return *registry;
}

void GlobalProfiles::note_call() noexcept { g_call_count.fetch_add(1, std::memory_order_relaxed); }

void GlobalProfiles::add(const std::shared_ptr<ProfileCollector>& collector) {
  std::lock_guard lock(mutex_);
  if (std::find(collectors_.begin(), collectors_.end(), collector) == collectors_.end()) {
    collectors_.push_back(collector);
  }
  if (!handlers_installed_) {
    handlers_installed_ = true;
    install_handlers();
  }
}

void GlobalProfiles::enable_host_zones() {
  std::lock_guard lock(mutex_);
  host_zones_ = true;
  if (!handlers_installed_) {
    handlers_installed_ = true;
    install_handlers();
  }
}

void GlobalProfiles::collect_without_exit_report() {
  {
    std::lock_guard lock(mutex_);
    own_report_at_exit_ = false;
  }
  enable_host_zones();
  set_zones_enabled(true);
}

void GlobalProfiles::merge_worker_shards_into(std::vector<Profile>& profiles) const {
  attach_worker_shards(profiles);
}

void GlobalProfiles::clear() {
  std::lock_guard lock(mutex_);
  collectors_.clear();
}

void GlobalProfiles::set_options(const ProfileOptions& options) {
  std::lock_guard lock(mutex_);
  options_ = options;
  if (handlers_installed_) {
    start_tracing_if_asked();
    detail::update_worker_directory(options_);
  }
}

void GlobalProfiles::start_tracing_if_asked() {
  if (options_.profile && !options_.trace.empty()) set_tracing(true, options_.trace_buffer_bytes);
}

ProfileOptions GlobalProfiles::options() const {
  std::lock_guard lock(mutex_);
  return options_;
}

void GlobalProfiles::install_handlers() {
  start_tracing_if_asked();
  std::atexit(write_at_exit);
  detail::start_process_role(options_);
  if (is_worker_process()) terminate_through_writer();
  // The zones' fork handlers are registered with their registry: made first, so that these run
  // before theirs before fork() (prepare handlers run in reverse order). The lock order is then
  // this registry's locks before the zones' locks, as when the profile is written.
  (void)host_zone_record_count();
  ::pthread_atfork(prepare_fork, after_fork_in_parent, after_fork_in_child);
  int fds[2] = {-1, -1};
  if (::pipe2(fds, O_CLOEXEC) != 0) return;  // no signal support; exit printing still works
  g_signal_pipe_read = fds[0];
  g_signal_pipe_write.store(fds[1], std::memory_order_relaxed);
  std::thread(watch_signals, fds[0]).detach();
  struct sigaction action {};
  action.sa_handler = on_terminating_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, &g_previous_int);
  ::sigaction(SIGTERM, &action, &g_previous_term);
}

// No lock of this registry may be held by a thread the fork child will not have.
// SIGINT and SIGTERM wait until the child has a pipe of its own: delivered earlier, the child's
// handler would write into the parent's pipe.
void GlobalProfiles::prepare_fork() noexcept {
  GlobalProfiles& self = instance();
  self.write_mutex_.lock();
  self.mutex_.lock();
  sigset_t terminating;
  sigemptyset(&terminating);
  sigaddset(&terminating, SIGINT);
  sigaddset(&terminating, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &terminating, &g_mask_before_fork);
  detail::prepare_worker_fork();
}

void GlobalProfiles::after_fork_in_parent() noexcept {
  GlobalProfiles& self = instance();
  detail::after_worker_fork_in_parent();
  ::pthread_sigmask(SIG_SETMASK, &g_mask_before_fork, nullptr);
  self.mutex_.unlock();
  self.write_mutex_.unlock();
}

// The child is a worker: it writes its own zones as a shard, forgets the graph profiles it
// inherited (their counts are the parent's), and handles signals and exceptions again.
void GlobalProfiles::after_fork_in_child() noexcept {
  GlobalProfiles& self = instance();
  detail::become_forked_worker();
  self.first_worker_collector_ = self.collectors_.size();
  self.activity_at_last_write_ = -1;
  restart_signal_watcher();
  terminate_through_writer();
  ::pthread_sigmask(SIG_SETMASK, &g_mask_before_fork, nullptr);
  self.mutex_.unlock();
  self.write_mutex_.unlock();
}

std::vector<Profile> GlobalProfiles::printable_profiles() const {
  std::vector<std::shared_ptr<ProfileCollector>> collectors;
  bool host_zones = false;
  {
    std::lock_guard lock(mutex_);
    collectors.assign(collectors_.begin() + static_cast<std::ptrdiff_t>(first_worker_collector_),
                      collectors_.end());
    host_zones = host_zones_;
  }
  std::vector<Profile> profiles;
  for (const auto& collector : collectors) {
    Profile profile = collector->snapshot();
    if (profile_ran(profile)) profiles.push_back(std::move(profile));
  }
  std::stable_sort(profiles.begin(), profiles.end(),
                   [](const Profile& a, const Profile& b) { return cost_ns(a) > cost_ns(b); });
  if (host_zones) {
    HostRecord host = snapshot_host_zones();
    // Graph calls alone are already in the Function section: the zones section is printed when
    // the program has zones of its own.
    if (host.has_program_zones()) {
      host.zone_overhead_ns = measure_zone_overhead_ns();
      if (profiles.empty()) {
        profiles.emplace_back();
        profiles.back().title = "Host zones";
      }
      profiles.front().host = std::move(host);
    }
  }
  return profiles;
}

void GlobalProfiles::write() {
  std::lock_guard write_lock(write_mutex_);
  const ProfileOptions settings = options();
  const std::int64_t activity =
      g_call_count.load(std::memory_order_relaxed) + host_zone_record_count();
  bool own_report = true;
  {
    std::lock_guard lock(mutex_);
    own_report = own_report_at_exit_;
  }
  if (!own_report && !is_worker_process()) {
    // The program renders its own report (collect_without_exit_report): nothing to snapshot.
    activity_at_last_write_ = activity;
    return;
  }
  std::vector<Profile> profiles = printable_profiles();
  if (is_worker_process()) {
    write_shard(std::move(profiles), settings);
    activity_at_last_write_ = activity;
    return;
  }
  attach_worker_shards(profiles);
  if (settings.min_peak_memory) {
    for (Profile& profile : profiles) add_min_peaks(profile);
  }
  TraceRecord trace;  // the timeline, when one is written: the HTML report draws it too
  if (settings.profile && !settings.trace.empty()) {
    // Written first, so the profile's header can say what it holds. Recording pauses meanwhile
    // (calls in flight finish their slices): a loop that keeps running while the file is written
    // would otherwise overwrite what is being copied.
    const bool was_tracing = tracing();
    set_tracing(false, settings.trace_buffer_bytes);
    TraceSummary summary;
    try {
      summary = write_trace(settings.trace, &trace);
    } catch (...) {
      if (was_tracing) set_tracing(true, settings.trace_buffer_bytes);
      throw;
    }
    if (was_tracing) set_tracing(true, settings.trace_buffer_bytes);
    for (Profile& profile : profiles) profile.trace = summary;
  }
  const TextReportOptions report = report_options(settings);
  const bool json = settings.destination.size() > 5 && settings.destination.ends_with(".json");
  const std::string text =
      json ? to_json_text(profiles, report) : render_profiles(profiles, report);
  if (settings.destination == "stderr" || settings.destination == "stdout") {
    write_all_to_fd(settings.destination == "stderr" ? STDERR_FILENO : STDOUT_FILENO, text);
  } else {
    write_file_atomically(settings.destination, text);
  }
  // The views render the profiles' sum, as the text report's last profile does.
  if (!settings.html.empty() || !settings.folded.empty()) {
    const Profile all = profiles.size() == 1 ? profiles.front()
                                             : sum_profiles(profiles, sum_title(profiles.size()));
    if (!settings.html.empty()) {
      const bool traced = settings.profile && !settings.trace.empty();
      write_file_atomically(settings.html, render_html(all, {.n_chart_rows = settings.n_ops,
                                                             .trace = traced ? &trace : nullptr}));
    }
    if (!settings.folded.empty()) write_file_atomically(settings.folded, render_folded(all));
  }
  activity_at_last_write_ = activity;
}

void GlobalProfiles::write_shard(std::vector<Profile> profiles, const ProfileOptions& settings) {
  HostRecord host = snapshot_host_zones();
  if (detail::forked_worker()) {
    // Steps and data sources live on in the copy of the parent's memory: they are the parent's.
    host.steps.clear();
    host.dropped_step_count = 0;
    host.epochs.clear();
    host.data_sources.clear();
  }
  host.zone_overhead_ns = measure_zone_overhead_ns();
  host.processes = {detail::own_process_record(host)};
  if (profiles.empty()) {
    profiles.emplace_back();
    profiles.back().title = fmt::format("Worker {}", ::getpid());
  }
  profiles.front().host = std::move(host);
  write_file_atomically(detail::own_shard_path(), to_json_text(profiles, report_options(settings)));
}

void GlobalProfiles::attach_worker_shards(std::vector<Profile>& profiles) const {
  const std::string directory = detail::worker_directory();
  if (directory.empty() || ::access(directory.c_str(), X_OK) != 0) return;
  const bool own_zones = !profiles.empty() && !profiles.front().host.empty();
  HostRecord own = own_zones ? profiles.front().host : snapshot_host_zones();
  const ProcessRecord main = detail::own_process_record(own);
  std::vector<Profile> merged = profiles;
  if (merged.empty()) {
    merged.emplace_back();
    merged.back().title = "Host zones";
  }
  if (!own_zones) {
    // The program's own zones were left out (graph calls only), but its workers are shown.
    own.zone_overhead_ns = measure_zone_overhead_ns();
    merged.front().host = std::move(own);
  }
  if (merge_worker_shards(merged, directory, detail::worker_root_pid(), main) > 0) {
    profiles = std::move(merged);
  }
}

bool GlobalProfiles::write_if_active() noexcept {
  try {
    {
      std::lock_guard lock(mutex_);
      if (collectors_.empty() && !host_zones_) return true;
    }
    {
      // Nothing ran since the last write (e.g. a failing call wrote, then the process exits).
      std::lock_guard write_lock(write_mutex_);
      if (activity_at_last_write_ ==
          g_call_count.load(std::memory_order_relaxed) + host_zone_record_count()) {
        return true;
      }
    }
    write();
    return true;
  } catch (const std::exception& error) {
    const std::string line = fmt::format("tscope: could not write the profile: {}\n", error.what());
    write_all_to_fd(STDERR_FILENO, line);
  } catch (...) {
    write_all_to_fd(STDERR_FILENO, "tscope: could not write the profile: unknown exception\n");
  }
  return false;
}

}  // namespace tscope::profile
