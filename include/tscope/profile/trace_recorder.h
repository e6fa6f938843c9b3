// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The recording side of the timeline (trace.h): every node execution and call of a profiled
/// Function, and every host zone, as a fixed-size event in the calling thread's ring.
///
/// Tracing is on with `profiling.trace=PATH` (and profile=true) in TSCOPE_FLAGS, the CLI's
/// `--trace PATH`, or set_tracing(true). Each thread writes into its own ring, preallocated on its
/// first event (the one registration that locks): no allocation, lock or lookup per event. When a
/// ring is full the oldest events are overwritten, and the snapshot counts them as dropped.
/// Events carry raw ticks and integer ids; names, shapes and costs are registered once per
/// function, node and input signature, on cold paths, and resolved when the trace is snapshotted.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tscope/profile/profile.h"
#include "tscope/profile/trace.h"
#include "tscope/profile/zones.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

inline constexpr std::int64_t kDefaultTraceRingBytes = std::int64_t{8} << 20;

enum class TraceEventKind : std::uint8_t { Node, Call, ZoneBegin, ZoneEnd };

/// One thread's ring. Only the owning thread writes; a snapshot may read it at any time. Every
/// word is a relaxed atomic (a plain move on x86), and the two counters let a reader discard
/// events the writer overwrote while they were being copied, as a sequence lock does.
struct TraceRing {
  static constexpr std::size_t kWords = 6;  // start, end, meta, id, signature, live bytes

  std::unique_ptr<std::atomic<std::int64_t>[]> words;
  std::uint64_t mask = 0;  ///< capacity - 1; the capacity is a power of two
  /// Events claimed (about to be written) and published (fully written).
  std::atomic<std::uint64_t> claimed{0};
  std::atomic<std::uint64_t> published{0};
  std::int64_t thread_index = 0;
  std::int64_t os_thread_id = 0;
  std::string name;  ///< under the registry's lock

  /// `meta`: the kind (bits 56-63), whether the ticks are TSC ticks (bit 48) and the node index
  /// (bits 0-31).
  void write(std::int64_t start,
             std::int64_t end,
             std::uint64_t meta,
             std::int64_t id,
             std::int64_t signature,
             std::int64_t live_bytes) noexcept {
    const std::uint64_t index = claimed.load(std::memory_order_relaxed);
    claimed.store(index + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    std::atomic<std::int64_t>* event = &words[(index & mask) * kWords];
    event[0].store(start, std::memory_order_relaxed);
    event[1].store(end, std::memory_order_relaxed);
    event[2].store(static_cast<std::int64_t>(meta), std::memory_order_relaxed);
    event[3].store(id, std::memory_order_relaxed);
    event[4].store(signature, std::memory_order_relaxed);
    event[5].store(live_bytes, std::memory_order_relaxed);
    published.store(index + 1, std::memory_order_release);
  }
};

[[nodiscard]] constexpr std::uint64_t trace_meta(TraceEventKind kind,
                                                 bool tsc_ticks,
                                                 std::uint32_t node) noexcept {
  return (static_cast<std::uint64_t>(kind) << 56) | (std::uint64_t{tsc_ticks} << 48) | node;
}

namespace detail {
/// The switch; the only thing code that could trace reads when tracing is off.
extern std::atomic<bool> g_tracing;
/// The calling thread's ring once made.
extern constinit thread_local TraceRing* current_trace_ring;
/// Makes the calling thread's ring (its first event); null when out of memory.
[[nodiscard]] TraceRing* make_trace_ring() noexcept;
}  // namespace detail

[[nodiscard]] inline bool tracing() noexcept {
  return detail::g_tracing.load(std::memory_order_relaxed);
}

/// The calling thread's ring, made on first use; null when it could not be allocated.
[[nodiscard]] inline TraceRing* this_thread_trace_ring() noexcept {
  TraceRing* const ring = detail::current_trace_ring;
  return ring != nullptr ? ring : detail::make_trace_ring();
}

/// Turns tracing on or off for every thread. `ring_bytes` sizes the rings threads make from now
/// on (rounded down to a power-of-two number of events; at least 1024 events).
void set_tracing(bool on, std::int64_t ring_bytes = kDefaultTraceRingBytes);
/// Events one ring made now holds.
[[nodiscard]] std::int64_t trace_ring_capacity_events() noexcept;

/// What the slices of one node show; registered once per Function.
struct TraceNodeLabel {
  std::string name;        ///< the Apply row's name
  std::string class_name;  ///< "Elemwise"
  std::string op_name;     ///< "Elemwise{add,no_inplace}"
  std::string impl;        ///< "blas", "dnnl", ...
  std::string site;        ///< where the user created the node: "mlp.cpp:42"
  std::string user_op;     ///< the user-level op it came from: "softmax"
};

/// What one input signature of a node adds to its slices.
struct TraceSignatureLabel {
  std::string shapes;  ///< "float32[64,784] float32[784,512] -> float32[64,512]"
  double flops = -1;   ///< negative: the op has no cost rule
  double bytes = -1;
};

/// Registers a Function's names; the id goes into its events. Locks; call once per Function.
[[nodiscard]] std::uint32_t register_trace_function(std::string name,
                                                    std::vector<TraceNodeLabel> nodes);
/// Records what `signature` (an input-signature hash) of node `node` of function `function`
/// means, unless already known. Locks; called when a frame first sees a signature.
void note_trace_signature(std::uint32_t function,
                          std::uint32_t node,
                          std::uint64_t signature,
                          const TraceSignatureLabel& label);
/// Writes a zone entry or exit; called by zones.cpp while tracing.
void trace_zone_begin(const ZoneSite* site, std::int64_t ticks, bool tsc_ticks) noexcept;
void trace_zone_end(std::int64_t ticks, bool tsc_ticks) noexcept;
/// Names the calling thread's tracks (set_zone_thread_name calls it too).
void set_trace_thread_name(std::string_view name);

/// Every thread's events so far, resolved into the model. Safe while other threads record.
[[nodiscard]] TraceRecord snapshot_trace();
/// Snapshots the trace and writes it to `path` in the Chrome trace event format, atomically
/// (write_file_atomically). Returns what the profile's header says about it; `written`, when
/// given, receives the trace itself (for the HTML report). Throws Error(Io).
TraceSummary write_trace(const std::string& path, TraceRecord* written = nullptr);
/// Empties every ring and forgets registered names (tests). Call only while nothing records.
void reset_trace();

}  // namespace tscope::profile

#pragma GCC visibility pop
