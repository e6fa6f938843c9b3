// SPDX-License-Identifier: Apache-2.0
// Host zones (zones.h, zone_recorder.h). The hot path appends a 16-byte record to the calling
// thread's chunk and publishes it with one release store; no lock, no allocation. A full chunk is
// folded into the thread's call tree under the buffer's own mutex (once per 4096 records), which
// is also what a snapshot takes, so a reader never sees a record being written.
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "steps_recorder.h"
#include "tscope/profile/global_profiles.h"
#include "tscope/profile/profile_options.h"
#include "tscope/profile/tick_clock.h"
#include "tscope/profile/trace_recorder.h"
#include "tscope/profile/zone_recorder.h"

namespace tscope::profile {

namespace detail {
constinit std::atomic<int> g_zone_state{kZonesUndecided};
}  // namespace detail

namespace {

// site == nullptr: a zone exit. Otherwise an entry (value = ticks) or, for a Value site, a number
// (value = the double's bits).
struct Record {
  const ZoneSite* site;
  std::int64_t value;
};
constexpr std::uint32_t kChunkRecords = 4096;

constinit std::atomic<std::int64_t (*)()> g_injected_clock{nullptr};
constinit std::atomic<bool> g_use_tsc{false};
// What read_ticks() reads, in one word so the hot path loads one flag: see ClockMode.
enum ClockMode : int { kClockTsc = 0, kClockSteady = 1, kClockInjected = 2 };
constinit std::atomic<int> g_clock_mode{kClockSteady};

void update_clock_mode() noexcept {
  const int mode = g_injected_clock.load(std::memory_order_relaxed) != nullptr ? kClockInjected
                   : g_use_tsc.load(std::memory_order_relaxed)                 ? kClockTsc
                                                                               : kClockSteady;
  g_clock_mode.store(mode, std::memory_order_relaxed);
}

std::int64_t steady_ticks() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline std::int64_t read_ticks() noexcept {
  const int mode = g_clock_mode.load(std::memory_order_relaxed);
  if (mode == kClockTsc) [[likely]]
    return read_tsc();
  if (mode == kClockSteady) return steady_ticks();
  return g_injected_clock.load(std::memory_order_relaxed)();
}

// Zones also go to the timeline while tracing (trace_recorder.h), with the same ticks.
[[gnu::noinline]] void trace_zone_entry(const ZoneSite* site, std::int64_t ticks) noexcept {
  trace_zone_begin(site, ticks, g_clock_mode.load(std::memory_order_relaxed) == kClockTsc);
}
[[gnu::noinline]] void trace_zone_exit(std::int64_t ticks) noexcept {
  trace_zone_end(ticks, g_clock_mode.load(std::memory_order_relaxed) == kClockTsc);
}

struct PathKey {
  std::int32_t parent;
  const ZoneSite* site;
  bool operator==(const PathKey&) const = default;
};
struct PathKeyHash {
  std::size_t operator()(const PathKey& key) const noexcept {
    return std::hash<const void*>()(key.site) * 31U + static_cast<std::size_t>(key.parent);
  }
};

struct TreeNode {
  const ZoneSite* site;
  std::int32_t parent;
  std::int64_t call_count = 0;
  std::int64_t total_ticks = 0;
  std::int64_t self_ticks = 0;
  std::int32_t last_child = -1;  // the child entered last: loops re-enter it, skipping the map
};
struct OpenFrame {
  std::int32_t node;
  std::int64_t start_ticks;
  std::int64_t child_ticks;
};
struct ValueStats {
  const ZoneSite* site;
  std::int64_t count = 0;
  double sum = 0, min = 0, max = 0;
};

// One thread's call tree, built by replaying its records in order.
struct ThreadTree {
  std::vector<TreeNode> nodes;  // parents before children
  std::unordered_map<PathKey, std::int32_t, PathKeyHash> node_of;
  std::vector<OpenFrame> open;  // the zones entered and not yet left, innermost last
  std::vector<ValueStats> values;
  std::int64_t record_count = 0;
  std::int32_t last_root = -1;  // the root entered last

  // Replays records in order; runs once per record, so it stays small and inlined.
  [[gnu::always_inline]] void apply(const Record& record) {
    if (record.site == nullptr) {
      if (open.empty()) [[unlikely]]
        return;  // the entry was forgotten by reset_host_zones
      OpenFrame* const frame = &open.back();
      const std::int64_t duration = record.value - frame->start_ticks;
      TreeNode& node = nodes[static_cast<std::size_t>(frame->node)];
      node.call_count += 1;
      node.total_ticks += duration;
      node.self_ticks += duration - frame->child_ticks;
      if (frame != open.data()) frame[-1].child_ticks += duration;
      open.pop_back();
    } else if (record.site->kind == ZoneKind::Value) [[unlikely]] {
      add_value(record.site, std::bit_cast<double>(record.value));
    } else {
      const std::int32_t parent = open.empty() ? -1 : open.back().node;
      std::int32_t node =
          parent < 0 ? last_root : nodes[static_cast<std::size_t>(parent)].last_child;
      if (node < 0 || nodes[static_cast<std::size_t>(node)].site != record.site) [[unlikely]] {
        node = find_or_add(parent, record.site);
      }
      open.push_back({.node = node, .start_ticks = record.value, .child_ticks = 0});
    }
  }

  // The node for `site` under `parent`, made when new; remembered as the parent's last child.
  [[gnu::noinline]] std::int32_t find_or_add(std::int32_t parent, const ZoneSite* site) {
    auto [it, inserted] =
        node_of.try_emplace({parent, site}, static_cast<std::int32_t>(nodes.size()));
    if (inserted) nodes.push_back({.site = site, .parent = parent});
    const std::int32_t node = it->second;
    (parent < 0 ? last_root : nodes[static_cast<std::size_t>(parent)].last_child) = node;
    return node;
  }

  [[gnu::noinline]] void add_value(const ZoneSite* site, double value) {
    for (ValueStats& stats : values) {
      if (stats.site != site) continue;
      stats.count += 1;
      stats.sum += value;
      stats.min = std::min(stats.min, value);
      stats.max = std::max(stats.max, value);
      return;
    }
    values.push_back({.site = site, .count = 1, .sum = value, .min = value, .max = value});
  }
};

struct ThreadBuffer {
  std::mutex mutex;  // the owner takes it only to fold a full chunk or at thread exit
  std::unique_ptr<Record[]> records = std::make_unique<Record[]>(kChunkRecords);
  std::atomic<std::uint32_t> count{0};  // records published in the chunk
  ThreadTree tree;                      // under mutex
  std::int64_t thread_index = 0;
  std::int64_t os_thread_id = 0;
  std::string name;     // under mutex
  bool exited = false;  // under mutex
  // Copied from the parent by fork(): the parent's data, never this process's (fork_child).
  bool inherited = false;

  // Folds the published records into the tree; the caller holds the mutex.
  void fold() {
    const std::uint32_t published = count.load(std::memory_order_acquire);
    for (std::uint32_t i = 0; i < published; ++i) tree.apply(records[i]);
    tree.record_count += published;
    count.store(0, std::memory_order_relaxed);
  }
};

// Out of line, so the hot path that calls it keeps a small frame.
[[gnu::noinline, gnu::cold]] void fold_full_chunk(ThreadBuffer& buffer) noexcept {
  std::lock_guard lock(buffer.mutex);
  buffer.fold();
}

inline void append(ThreadBuffer& buffer, const ZoneSite* site, std::int64_t value) noexcept {
  std::uint32_t used = buffer.count.load(std::memory_order_relaxed);
  if (used == kChunkRecords) [[unlikely]] {
    fold_full_chunk(buffer);
    used = 0;
  }
  buffer.records[used] = {site, value};
  buffer.count.store(used + 1, std::memory_order_release);
}

struct SiteKey {
  std::string name, file;
  std::uint32_t line;
  ZoneKind kind;
  auto operator<=>(const SiteKey&) const = default;
};

struct Registry {
  std::mutex mutex;
  std::vector<ThreadBuffer*> buffers;  // owned; an exited thread's buffer stays, chunk freed
  std::int64_t next_thread_index = 0;
  std::map<SiteKey, const ZoneSite*> interned;
  // What interned sites point at, kept here (deques do not move their elements) so that the
  // registry owns it for the process's life and leak checkers see it reachable.
  std::deque<std::string> interned_strings;
  std::deque<ZoneSite> interned_sites;
};

void prepare_fork() noexcept;
void after_fork_in_parent() noexcept;
void after_fork_in_child() noexcept;

Registry& registry() {
  // Leaked: the exit-time writer snapshots zones during static destruction.
  static Registry& instance = []() -> Registry& {
    Registry* made = new Registry();
    ::pthread_atfork(prepare_fork, after_fork_in_parent, after_fork_in_child);
    return *made;
  }();
  return instance;
}

constinit thread_local ThreadBuffer* t_buffer = nullptr;
constinit thread_local bool t_exited = false;
// set_zone_thread_name() before the thread's first zone.
thread_local std::string t_pending_name;

// Its destructor runs at thread exit: the thread's records are folded into its tree, which stays
// in the registry, and the chunk is freed.
struct ThreadRetirer {
  bool armed = false;
  ThreadRetirer() = default;
  ThreadRetirer(const ThreadRetirer&) = delete;
  ThreadRetirer& operator=(const ThreadRetirer&) = delete;
  ~ThreadRetirer() {
    ThreadBuffer* buffer = t_buffer;
    t_exited = true;
    t_buffer = nullptr;
    if (!armed || buffer == nullptr) return;
    std::lock_guard lock(buffer->mutex);
    buffer->fold();
    buffer->records.reset();
    // exit() runs the main thread's thread_local destructors before the exit-time writer: the
    // main thread is ending with the process, not before it.
    buffer->exited = buffer->os_thread_id != static_cast<std::int64_t>(::getpid());
  }
};
thread_local ThreadRetirer t_retirer;

// fork() copies one thread. Every zone lock is taken before the copy, so that none is held by a
// thread that the child will not have; the lock order is the snapshot's (registry, then buffers).
void prepare_fork() noexcept {
  Registry& shared = registry();
  shared.mutex.lock();
  for (ThreadBuffer* buffer : shared.buffers) buffer->mutex.lock();
}

void after_fork_in_parent() noexcept {
  Registry& shared = registry();
  for (ThreadBuffer* buffer : shared.buffers) buffer->mutex.unlock();
  shared.mutex.unlock();
}

// The child is a process of its own: the parent's threads are not its threads (counting them
// again would double them in a merged report), and the zones the forking thread had open were
// entered by the parent, so the child must not close them. The copies stay allocated but unused:
// freeing them would write to pages the child shares with the parent, and nothing else that could
// allocate is safe here. The forking thread gets a fresh buffer at its next zone.
void after_fork_in_child() noexcept {
  Registry& shared = registry();
  for (ThreadBuffer* buffer : shared.buffers) {
    buffer->inherited = true;
    buffer->mutex.unlock();
  }
  shared.next_thread_index = 0;
  t_buffer = nullptr;
  shared.mutex.unlock();
}

ThreadBuffer* attach_thread() noexcept {
  if (t_exited) return nullptr;  // a zone in another thread_local's destructor: dropped
  try {
    auto buffer = std::make_unique<ThreadBuffer>();
    buffer->os_thread_id = static_cast<std::int64_t>(::syscall(SYS_gettid));
    if (!t_pending_name.empty()) {
      buffer->name = std::move(t_pending_name);
    } else if (buffer->os_thread_id == static_cast<std::int64_t>(::getpid())) {
      buffer->name = "main";
    }
    Registry& shared = registry();
    {
      std::lock_guard lock(shared.mutex);
      buffer->thread_index = shared.next_thread_index++;
      shared.buffers.push_back(buffer.get());
    }
    t_retirer.armed = true;
    t_buffer = buffer.release();
    return t_buffer;
  } catch (...) {
    return nullptr;  // out of memory: this thread records nothing
  }
}

// Selects the clock before zones turn on, so no record is read with the wrong one.
void prepare_clock() noexcept {
  try {
    g_use_tsc.store(measured_tick_source().use_tsc, std::memory_order_relaxed);
  } catch (...) {
    g_use_tsc.store(false, std::memory_order_relaxed);
  }
  update_clock_mode();
}

// Reads the profile flag on first use; true when zones are on.
bool resolve_zones_on() noexcept {
  int state = detail::g_zone_state.load(std::memory_order_acquire);
  if (state != detail::kZonesUndecided) return state == detail::kZonesOn;
  bool on = false;
  try {
    on = process_flags().profile;
  } catch (...) {
    on = false;  // a bad flag is reported by whoever reads the flags for the graph functions
  }
  if (on) prepare_clock();
  int expected = detail::kZonesUndecided;
  detail::g_zone_state.compare_exchange_strong(expected, on ? detail::kZonesOn : detail::kZonesOff);
  state = detail::g_zone_state.load(std::memory_order_acquire);
  if (state == detail::kZonesOn && on) {
    try {
      GlobalProfiles::instance().enable_host_zones();
    } catch (...) {
      // No exit report then; the zones are still recorded and can be snapshotted.
    }
  }
  return state == detail::kZonesOn;
}

double ns_per_tick() {
  if (g_injected_clock.load(std::memory_order_relaxed) != nullptr) return 1.0;
  return g_use_tsc.load(std::memory_order_relaxed) ? measured_tick_source().ns_per_tick : 1.0;
}

std::int64_t to_ns(std::int64_t ticks, double tick_ns) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(ticks) * tick_ns));
}

std::string kind_name(ZoneKind kind) {
  switch (kind) {
    case ZoneKind::Zone:
      return "zone";
    case ZoneKind::Value:
      return "value";
    case ZoneKind::Function:
      return "function";
    case ZoneKind::InputWait:
      return "input_wait";
  }
  return "zone";
}

// The first zone of a thread, or zones not yet known to be on.
[[gnu::noinline]] bool zone_begin_slow(const ZoneSite* site) noexcept {
  if (detail::g_zone_state.load(std::memory_order_relaxed) != detail::kZonesOn &&
      !resolve_zones_on()) {
    return false;
  }
  ThreadBuffer* buffer = t_buffer;
  if (buffer == nullptr) buffer = attach_thread();
  if (buffer == nullptr) return false;
  const std::int64_t ticks = read_ticks();
  append(*buffer, site, ticks);
  if (tracing()) trace_zone_entry(site, ticks);
  return true;
}

}  // namespace

namespace detail {

bool zone_begin(const ZoneSite* site) noexcept {
  ThreadBuffer* const buffer = t_buffer;
  if (g_zone_state.load(std::memory_order_relaxed) != kZonesOn || buffer == nullptr) [[unlikely]] {
    return zone_begin_slow(site);
  }
  const std::int64_t ticks = read_ticks();
  append(*buffer, site, ticks);
  if (tracing()) [[unlikely]]
    trace_zone_entry(site, ticks);
  return true;
}

void zone_end() noexcept {
  const std::int64_t ticks = read_ticks();
  if (ThreadBuffer* const buffer = t_buffer) [[likely]] {
    append(*buffer, nullptr, ticks);
    if (tracing()) [[unlikely]]
      trace_zone_exit(ticks);
  }
}

void zone_value(const ZoneSite* site, double value) noexcept {
  if (g_zone_state.load(std::memory_order_relaxed) != kZonesOn && !resolve_zones_on()) return;
  ThreadBuffer* buffer = t_buffer;
  if (buffer == nullptr) [[unlikely]] {
    buffer = attach_thread();
    if (buffer == nullptr) return;
  }
  append(*buffer, site, std::bit_cast<std::int64_t>(value));
}

std::int64_t input_wait_begin(const ZoneSite* site) noexcept {
  if (!zone_begin(site)) return -1;
  return zone_clock_ns();
}

void input_wait_end(std::int64_t start_ns) noexcept {
  zone_end();
  add_input_wait_ns(zone_clock_ns() - start_ns);
}

}  // namespace detail

std::int64_t zone_clock_ns() noexcept {
  try {
    return to_ns(read_ticks(), ns_per_tick());
  } catch (...) {
    return steady_ticks();  // the tick source could not be measured: zones read steady_clock
  }
}

void set_zones_enabled(bool enabled) noexcept {
  if (enabled) prepare_clock();
  detail::g_zone_state.store(enabled ? detail::kZonesOn : detail::kZonesOff,
                             std::memory_order_release);
}

bool zones_enabled() noexcept { return resolve_zones_on(); }

const ZoneSite* intern_zone_site(std::string_view name,
                                 std::string_view file,
                                 std::uint32_t line,
                                 ZoneKind kind) {
  Registry& shared = registry();
  std::lock_guard lock(shared.mutex);
  SiteKey key{std::string(name), std::string(file), line, kind};
  auto it = shared.interned.find(key);
  if (it != shared.interned.end()) return it->second;
  // Owned by the leaked registry: records point at the site until the process ends.
  const char* name_copy = shared.interned_strings.emplace_back(name).c_str();
  const char* file_copy = shared.interned_strings.emplace_back(file).c_str();
  const ZoneSite* site =
      &shared.interned_sites.emplace_back(ZoneSite{name_copy, name_copy, file_copy, line, kind});
  shared.interned.emplace(std::move(key), site);
  return site;
}

void set_zone_thread_name(std::string_view name) {
  set_trace_thread_name(name);
  ThreadBuffer* const buffer = t_buffer;
  if (buffer == nullptr) {
    // No buffer yet (zones off, or none recorded): keep the name for when the thread attaches.
    t_pending_name = std::string(name);
    return;
  }
  std::lock_guard lock(buffer->mutex);
  buffer->name = std::string(name);
}

HostRecord snapshot_zone_trees() {
  HostRecord host;
  host.clock = g_injected_clock.load(std::memory_order_relaxed) != nullptr ? "injected"
               : g_use_tsc.load(std::memory_order_relaxed)                 ? "rdtsc"
                                                                           : "steady_clock";
  const double tick_ns = ns_per_tick();
  std::map<const ZoneSite*, std::int64_t> site_index;
  auto index_of = [&](const ZoneSite* site) {
    auto [it, inserted] =
        site_index.try_emplace(site, static_cast<std::int64_t>(host.sites.size()));
    if (inserted) {
      host.sites.push_back({.name = site->name,
                            .function = site->function,
                            .file = site->file,
                            .line = site->line,
                            .kind = kind_name(site->kind)});
    }
    return it->second;
  };
  Registry& shared = registry();
  std::lock_guard registry_lock(shared.mutex);
  for (ThreadBuffer* buffer : shared.buffers) {
    if (buffer->inherited) continue;
    ThreadTree tree;
    ZoneThreadRecord thread;
    {
      std::lock_guard lock(buffer->mutex);
      tree = buffer->tree;
      // The chunk's published records, replayed on the copy: the owner keeps appending past them.
      const std::uint32_t published = buffer->count.load(std::memory_order_acquire);
      for (std::uint32_t i = 0; i < published; ++i) tree.apply(buffer->records[i]);
      tree.record_count += published;
      thread.thread_index = buffer->thread_index;
      thread.os_thread_id = buffer->os_thread_id;
      thread.name = buffer->name;
      thread.exited = buffer->exited;
    }
    if (tree.nodes.empty() && tree.values.empty()) continue;
    for (const TreeNode& node : tree.nodes) {
      thread.nodes.push_back({.site = index_of(node.site),
                              .parent = node.parent,
                              .call_count = node.call_count,
                              .total_ns = to_ns(node.total_ticks, tick_ns),
                              .self_ns = to_ns(node.self_ticks, tick_ns)});
    }
    for (const ValueStats& value : tree.values) {
      thread.values.push_back({.site = index_of(value.site),
                               .count = value.count,
                               .sum = value.sum,
                               .min = value.min,
                               .max = value.max});
    }
    host.threads.push_back(std::move(thread));
  }
  return host;
}
HostRecord snapshot_host_zones() {
  HostRecord host = snapshot_zone_trees();
  attach_steps(host);
  attach_data_sources(host);
  return host;
}

std::int64_t host_zone_record_count() noexcept {
  try {
    Registry& shared = registry();
    std::lock_guard registry_lock(shared.mutex);
    std::int64_t total = 0;
    for (ThreadBuffer* buffer : shared.buffers) {
      if (buffer->inherited) continue;
      std::lock_guard lock(buffer->mutex);
      total += buffer->tree.record_count + buffer->count.load(std::memory_order_acquire);
    }
    return total;
  } catch (...) {
    return 0;
  }
}

void set_zone_clock_for_testing(std::int64_t (*read_ticks_fn)()) noexcept {
  g_injected_clock.store(read_ticks_fn, std::memory_order_relaxed);
  update_clock_mode();
}

void reset_host_zones() {
  reset_step_log();
  reset_data_sources();
  Registry& shared = registry();
  std::lock_guard registry_lock(shared.mutex);
  std::vector<ThreadBuffer*> live;
  for (ThreadBuffer* buffer : shared.buffers) {
    bool exited = false;
    {
      std::lock_guard lock(buffer->mutex);
      exited = buffer->exited || buffer->inherited;
      buffer->tree = ThreadTree{};
      buffer->count.store(0, std::memory_order_relaxed);
    }
    if (exited) {
      delete buffer;
    } else {
      buffer->thread_index = static_cast<std::int64_t>(live.size());
      live.push_back(buffer);
    }
  }
  shared.buffers = std::move(live);
  shared.next_thread_index = static_cast<std::int64_t>(shared.buffers.size());
}

double measure_zone_overhead_ns() {
  static constexpr ZoneSite kSite{"overhead", "measure_zone_overhead_ns", __FILE__, __LINE__,
                                  ZoneKind::Zone};
  // Four chunks per batch, so the cost of folding full chunks into the tree is included.
  constexpr int kPairs = 2 * kChunkRecords;
  ThreadBuffer scratch;
  double best_ns = 1e9;
  for (int batch = 0; batch < 5; ++batch) {
    const std::int64_t start_ns = steady_ticks();
    for (int i = 0; i < kPairs; ++i) {
      append(scratch, &kSite, read_ticks());
      append(scratch, nullptr, read_ticks());
    }
    const std::int64_t stop_ns = steady_ticks();
    best_ns = std::min(best_ns, static_cast<double>(stop_ns - start_ns) / kPairs);
  }
  return best_ns;
}

}  // namespace tscope::profile
