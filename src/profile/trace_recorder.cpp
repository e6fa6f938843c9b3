// SPDX-License-Identifier: Apache-2.0
// Timeline recording (trace_recorder.h): the per-thread rings, the names registered for them, and
// the snapshot that turns raw events into the TraceRecord model.
#include "tscope/profile/trace_recorder.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>

#include "tscope/profile/tick_clock.h"

namespace tscope::profile {

namespace detail {
constinit std::atomic<bool> g_tracing{false};
constinit thread_local TraceRing* current_trace_ring = nullptr;
}  // namespace detail

namespace {

constexpr std::int64_t kMinimumRingEvents = 1024;
constexpr std::int64_t kEventBytes = TraceRing::kWords * sizeof(std::int64_t);

struct FunctionNames {
  std::string name;
  std::vector<TraceNodeLabel> nodes;
};

using SignatureKey = std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>;

struct Registry {
  std::mutex mutex;
  std::deque<TraceRing> rings;  // a deque: rings never move, threads hold pointers to them
  std::int64_t ring_events = kDefaultTraceRingBytes / kEventBytes;
  std::deque<FunctionNames> functions;
  std::map<SignatureKey, TraceSignatureLabel> signatures;
  // TSC calibration: a TSC reading and the steady clock's reading at the same moment.
  bool calibrated = false;
  std::int64_t tsc_origin = 0;
  std::int64_t steady_origin_ns = 0;
  double ns_per_tick = 1.0;
};

Registry& registry() {
  // Leaked: the exit-time writer snapshots the trace during static destruction, and threads keep
  // pointers to their rings until they end.
  static Registry& instance = *new Registry();
  return instance;
}

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::int64_t ring_events_for(std::int64_t ring_bytes) {
  const std::int64_t events = std::max(ring_bytes / kEventBytes, kMinimumRingEvents);
  return static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(events)));
}

void calibrate(Registry& shared) {
  if (shared.calibrated) return;
  const TickSource& source = measured_tick_source();
  shared.ns_per_tick = source.ns_per_tick;
  shared.tsc_origin = read_tsc();
  shared.steady_origin_ns = steady_now_ns();
  shared.calibrated = true;
}

// set_trace_thread_name() before the thread's first event.
thread_local std::string t_pending_name;

}  // namespace

namespace detail {

TraceRing* make_trace_ring() noexcept {
  try {
    Registry& shared = registry();
    std::lock_guard lock(shared.mutex);
    TraceRing& ring = shared.rings.emplace_back();
    const auto capacity = static_cast<std::size_t>(shared.ring_events);
    ring.words = std::make_unique<std::atomic<std::int64_t>[]>(capacity * TraceRing::kWords);
    ring.mask = capacity - 1;
    ring.thread_index = static_cast<std::int64_t>(shared.rings.size()) - 1;
    ring.os_thread_id = static_cast<std::int64_t>(::syscall(SYS_gettid));
    if (!t_pending_name.empty()) {
      ring.name = std::move(t_pending_name);
    } else if (ring.os_thread_id == static_cast<std::int64_t>(::getpid())) {
      ring.name = "main";
    }
    current_trace_ring = &ring;
    return &ring;
  } catch (...) {
    return nullptr;  // out of memory: this thread's events are not recorded
  }
}

}  // namespace detail

void set_tracing(bool on, std::int64_t ring_bytes) {
  Registry& shared = registry();
  {
    std::lock_guard lock(shared.mutex);
    shared.ring_events = ring_events_for(ring_bytes);
    if (on) calibrate(shared);
  }
  detail::g_tracing.store(on, std::memory_order_release);
}

std::int64_t trace_ring_capacity_events() noexcept {
  Registry& shared = registry();
  std::lock_guard lock(shared.mutex);
  return shared.ring_events;
}

std::uint32_t register_trace_function(std::string name, std::vector<TraceNodeLabel> nodes) {
  Registry& shared = registry();
  std::lock_guard lock(shared.mutex);
  shared.functions.push_back(FunctionNames{std::move(name), std::move(nodes)});
  return static_cast<std::uint32_t>(shared.functions.size() - 1);
}

void note_trace_signature(std::uint32_t function,
                          std::uint32_t node,
                          std::uint64_t signature,
                          const TraceSignatureLabel& label) {
  Registry& shared = registry();
  std::lock_guard lock(shared.mutex);
  shared.signatures.try_emplace(SignatureKey{function, node, signature}, label);
}

void trace_zone_begin(const ZoneSite* site, std::int64_t ticks, bool tsc_ticks) noexcept {
  if (TraceRing* const ring = this_thread_trace_ring()) {
    ring->write(ticks, ticks, trace_meta(TraceEventKind::ZoneBegin, tsc_ticks, 0),
                static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(site)), 0, 0);
  }
}

void trace_zone_end(std::int64_t ticks, bool tsc_ticks) noexcept {
  if (TraceRing* const ring = this_thread_trace_ring()) {
    ring->write(ticks, ticks, trace_meta(TraceEventKind::ZoneEnd, tsc_ticks, 0), 0, 0, 0);
  }
}

void set_trace_thread_name(std::string_view name) {
  TraceRing* const ring = detail::current_trace_ring;
  if (ring == nullptr) {
    t_pending_name = std::string(name);  // for when the thread makes its ring
    return;
  }
  Registry& shared = registry();
  std::lock_guard lock(shared.mutex);
  ring->name = std::string(name);
}

namespace {

/// One ring's events, copied out, with the ones overwritten during the copy left out.
struct RawEvent {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::uint64_t meta = 0;
  std::int64_t id = 0;
  std::int64_t signature = 0;
  std::int64_t live_bytes = 0;

  [[nodiscard]] TraceEventKind kind() const { return static_cast<TraceEventKind>(meta >> 56); }
  [[nodiscard]] bool tsc() const { return ((meta >> 48) & 1U) != 0; }
  [[nodiscard]] std::uint32_t node() const { return static_cast<std::uint32_t>(meta); }
};

// One pass over the ring: the events published when it starts, less those the writer may have
// overwritten meanwhile; `torn` counts these.
std::vector<RawEvent> copy_once(const TraceRing& ring,
                                std::uint64_t& published,
                                std::uint64_t& first,
                                std::uint64_t& torn) {
  const std::uint64_t capacity = ring.mask + 1;
  published = ring.published.load(std::memory_order_acquire);
  first = published > capacity ? published - capacity : 0;
  std::vector<RawEvent> events;
  events.reserve(published - first);
  for (std::uint64_t index = first; index < published; ++index) {
    const std::atomic<std::int64_t>* word = &ring.words[(index & ring.mask) * TraceRing::kWords];
    RawEvent event;
    event.start = word[0].load(std::memory_order_relaxed);
    event.end = word[1].load(std::memory_order_relaxed);
    event.meta = static_cast<std::uint64_t>(word[2].load(std::memory_order_relaxed));
    event.id = word[3].load(std::memory_order_relaxed);
    event.signature = word[4].load(std::memory_order_relaxed);
    event.live_bytes = word[5].load(std::memory_order_relaxed);
    events.push_back(event);
  }
  // Events the writer claimed meanwhile may have overwritten the oldest ones copied.
  std::atomic_thread_fence(std::memory_order_acquire);
  const std::uint64_t claimed = ring.claimed.load(std::memory_order_relaxed);
  const std::uint64_t valid_from = claimed > capacity ? claimed - capacity : 0;
  torn = valid_from > first ? std::min(valid_from - first, published - first) : 0;
  events.erase(events.begin(), events.begin() + static_cast<std::ptrdiff_t>(torn));
  return events;
}

std::vector<RawEvent> copy_events(const TraceRing& ring,
                                  std::int64_t& recorded,
                                  std::int64_t& dropped) {
  // A reader descheduled in the middle of its copy may find that a fast writer went round the
  // whole ring meanwhile: it tries again, a few times, while most of what it copied was lost.
  constexpr int kAttempts = 4;
  std::uint64_t published = 0, first = 0, torn = 0;
  std::vector<RawEvent> events;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    events = copy_once(ring, published, first, torn);
    if (torn <= (published - first) / 2) break;
  }
  recorded += static_cast<std::int64_t>(published);
  dropped += static_cast<std::int64_t>(first + torn);
  return events;
}

/// Builds labels on demand, one per distinct (kind, key).
class LabelTable {
 public:
  LabelTable(const Registry& shared, TraceRecord& trace) : shared_(shared), trace_(trace) {}

  std::int64_t node(std::uint32_t function, std::uint32_t node, std::uint64_t signature) {
    const auto key = std::make_tuple(function, node, signature);
    if (const auto it = nodes_.find(key); it != nodes_.end()) return it->second;
    TraceLabelRecord label;
    label.category = "node";
    if (function < shared_.functions.size() && node < shared_.functions[function].nodes.size()) {
      const FunctionNames& names = shared_.functions[function];
      const TraceNodeLabel& node_label = names.nodes[node];
      label.name = node_label.name;
      add_text(label, "function", names.name);
      add_text(label, "class", node_label.class_name);
      add_text(label, "op", node_label.op_name);
      add_text(label, "impl", node_label.impl);
      add_text(label, "site", node_label.site);
      add_text(label, "user_op", node_label.user_op);
      add_number(label, "topo_index", static_cast<double>(node));
    } else {
      label.name = "node " + std::to_string(node);
    }
    const auto signature_label = shared_.signatures.find(SignatureKey{function, node, signature});
    if (signature_label != shared_.signatures.end()) {
      add_text(label, "shapes", signature_label->second.shapes);
      if (signature_label->second.flops >= 0)
        add_number(label, "flops", signature_label->second.flops);
      if (signature_label->second.bytes >= 0)
        add_number(label, "bytes", signature_label->second.bytes);
    }
    return nodes_[key] = push(std::move(label));
  }

  std::int64_t call(std::uint32_t function) {
    if (const auto it = calls_.find(function); it != calls_.end()) return it->second;
    TraceLabelRecord label;
    label.category = "function";
    if (function < shared_.functions.size()) {
      label.name = shared_.functions[function].name;
      add_number(label, "nodes", static_cast<double>(shared_.functions[function].nodes.size()));
    } else {
      label.name = "function " + std::to_string(function);
    }
    return calls_[function] = push(std::move(label));
  }

  std::int64_t zone(const ZoneSite* site) {
    if (const auto it = zones_.find(site); it != zones_.end()) return it->second;
    TraceLabelRecord label;
    label.category = "zone";
    label.name = site->name;
    add_text(label, "function", site->function);
    if (site->file != nullptr && site->file[0] != '\0') {
      add_text(label, "site", std::string(site->file) + ":" + std::to_string(site->line));
    }
    return zones_[site] = push(std::move(label));
  }

 private:
  static void add_text(TraceLabelRecord& label, std::string key, std::string text) {
    if (text.empty()) return;
    label.args.push_back(TraceArgRecord{std::move(key), std::move(text), 0, false});
  }
  static void add_number(TraceLabelRecord& label, std::string key, double number) {
    label.args.push_back(TraceArgRecord{std::move(key), {}, number, true});
  }
  std::int64_t push(TraceLabelRecord label) {
    trace_.labels.push_back(std::move(label));
    return static_cast<std::int64_t>(trace_.labels.size()) - 1;
  }

  const Registry& shared_;
  TraceRecord& trace_;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, std::int64_t> nodes_;
  std::map<std::uint32_t, std::int64_t> calls_;
  std::map<const ZoneSite*, std::int64_t> zones_;
};

}  // namespace

TraceRecord snapshot_trace() {
  Registry& shared = registry();
  std::lock_guard lock(shared.mutex);
  TraceRecord trace;
  trace.process_id = static_cast<std::int64_t>(::getpid());
  trace.ring_capacity_events = shared.ring_events;
  LabelTable labels(shared, trace);
  auto to_ns = [&shared](std::int64_t ticks, bool tsc) {
    if (!tsc) return ticks;
    return shared.steady_origin_ns +
           static_cast<std::int64_t>(
               std::llround(static_cast<double>(ticks - shared.tsc_origin) * shared.ns_per_tick));
  };
  for (const TraceRing& ring : shared.rings) {
    const std::vector<RawEvent> events =
        copy_events(ring, trace.recorded_event_count, trace.dropped_event_count);
    if (events.empty()) continue;
    const auto thread_index = static_cast<std::int64_t>(trace.threads.size());
    trace.threads.push_back(TraceThreadRecord{thread_index, ring.os_thread_id, ring.name});
    // Zone entries wait for their exit; an exit whose entry was overwritten is skipped, and an
    // entry still open when the snapshot was taken has no slice yet.
    std::vector<const RawEvent*> open_zones;
    for (const RawEvent& event : events) {
      switch (event.kind()) {
        case TraceEventKind::Node: {
          const auto function = static_cast<std::uint32_t>(event.id);
          const std::int64_t start = to_ns(event.start, event.tsc());
          const std::int64_t end = to_ns(event.end, event.tsc());
          trace.slices.push_back(TraceSliceRecord{
              thread_index, TraceTrack::Graph, start, end - start,
              labels.node(function, event.node(), static_cast<std::uint64_t>(event.signature))});
          trace.live_bytes.push_back(TraceCounterRecord{end, event.live_bytes});
          break;
        }
        case TraceEventKind::Call: {
          const std::int64_t start = to_ns(event.start, event.tsc());
          const std::int64_t end = to_ns(event.end, event.tsc());
          trace.slices.push_back(
              TraceSliceRecord{thread_index, TraceTrack::Graph, start, end - start,
                               labels.call(static_cast<std::uint32_t>(event.id))});
          break;
        }
        case TraceEventKind::ZoneBegin:
          open_zones.push_back(&event);
          break;
        case TraceEventKind::ZoneEnd: {
          if (open_zones.empty()) break;
          const RawEvent& begin = *open_zones.back();
          open_zones.pop_back();
          const auto* site =
              reinterpret_cast<const ZoneSite*>(static_cast<std::uintptr_t>(begin.id));
          // A graph Function's call is already on the graph track.
          if (site->kind == ZoneKind::Function) break;
          const std::int64_t start = to_ns(begin.start, begin.tsc());
          const std::int64_t end = to_ns(event.start, event.tsc());
          trace.slices.push_back(TraceSliceRecord{thread_index, TraceTrack::Zones, start,
                                                  end - start, labels.zone(site)});
          break;
        }
      }
    }
  }
  // Times from the first event, so the timeline starts at zero.
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  for (const TraceSliceRecord& slice : trace.slices) origin = std::min(origin, slice.start_ns);
  if (trace.slices.empty()) origin = 0;
  for (TraceSliceRecord& slice : trace.slices) slice.start_ns -= origin;
  for (TraceCounterRecord& counter : trace.live_bytes) counter.time_ns -= origin;
  order_trace_slices(trace.slices);
  std::stable_sort(trace.live_bytes.begin(), trace.live_bytes.end(),
                   [](const TraceCounterRecord& a, const TraceCounterRecord& b) {
                     return a.time_ns < b.time_ns;
                   });
  return trace;
}

void reset_trace() {
  Registry& shared = registry();
  std::lock_guard lock(shared.mutex);
  for (TraceRing& ring : shared.rings) {
    ring.claimed.store(0, std::memory_order_relaxed);
    ring.published.store(0, std::memory_order_relaxed);
  }
  shared.functions.clear();
  shared.signatures.clear();
}

}  // namespace tscope::profile
