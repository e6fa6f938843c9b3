// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The timeline model: what ran when, on which thread. Recording (trace_recorder.h) fills it from
/// per-thread rings; render_chrome_trace writes it in the Chrome trace event format, which
/// Perfetto (ui.perfetto.dev) and chrome://tracing open. Plain data, like profile.h: nothing here
/// measures or records.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#pragma GCC visibility push(default)

namespace tscope::profile {

/// A thread that recorded events.
struct TraceThreadRecord {
  std::int64_t thread_index = 0;  ///< order in which threads first recorded (0 = first)
  std::int64_t os_thread_id = 0;  ///< the kernel's thread id (gettid)
  std::string name;               ///< "main", a name given with set_zone_thread_name, or empty
};

/// One named argument of a slice: a number or a string.
struct TraceArgRecord {
  std::string key;
  std::string text;   ///< used when !is_number
  double number = 0;  ///< used when is_number
  bool is_number = false;
};

/// What a slice shows: shared by every slice of the same node, signature, function or zone.
struct TraceLabelRecord {
  std::string name;      ///< the Apply row's name, the function's name or the zone's name
  std::string category;  ///< "node", "function" or "zone"
  std::vector<TraceArgRecord> args;
};

/// Graph work (function calls and their nodes) and host zones of one thread go on separate
/// tracks, so a zone and the graph call it makes can be told apart at a glance.
enum class TraceTrack : std::uint8_t { Graph, Zones };

/// In the Chrome trace file a zone track's thread id is its thread's plus this: Linux thread ids
/// stay below 2^22 (pid_max's ceiling), so it cannot clash with a real thread.
inline constexpr std::int64_t kZoneTrackIdOffset = std::int64_t{1} << 23;

/// One timed span: a node execution, a function call or a zone.
struct TraceSliceRecord {
  std::int64_t thread_index = 0;
  TraceTrack track = TraceTrack::Graph;
  std::int64_t start_ns = 0;  ///< since the first event of the trace
  std::int64_t duration_ns = 0;
  std::int64_t label = 0;  ///< index into TraceRecord::labels
};

/// The allocator's live bytes after a node ran.
struct TraceCounterRecord {
  std::int64_t time_ns = 0;  ///< since the first event of the trace
  std::int64_t live_bytes = 0;
};

struct TraceRecord {
  std::int64_t process_id = 0;
  std::string process_name;
  std::vector<TraceThreadRecord> threads;
  std::vector<TraceLabelRecord> labels;
  std::vector<TraceSliceRecord> slices;        ///< by thread, then start time
  std::vector<TraceCounterRecord> live_bytes;  ///< by time, every thread's nodes together
  std::int64_t recorded_event_count = 0;       ///< events written into the rings
  std::int64_t dropped_event_count = 0;        ///< of those, lost when a thread's ring wrapped
  std::int64_t ring_capacity_events = 0;       ///< events one thread's ring holds
};

/// Puts slices in the model's order: by thread and track, then start, the longer slice first, so
/// that a parent comes before the slices nested in it.
void order_trace_slices(std::vector<TraceSliceRecord>& slices);

/// The Chrome trace event format (JSON object form): complete events ("X") for slices, a counter
/// ("C") for live bytes, metadata ("M") naming the process and each track; timestamps in
/// microseconds with nanosecond decimals. otherData carries the event and drop counts.
[[nodiscard]] std::string render_chrome_trace(const TraceRecord& trace);

/// Reads a file render_chrome_trace wrote back into the model (labels rebuilt from each slice's
/// name, category and args). Throws Error(Parse) naming `path` when the text is not JSON or not a
/// Chrome trace.
[[nodiscard]] TraceRecord parse_chrome_trace(std::string_view text, const std::string& path);

}  // namespace tscope::profile

#pragma GCC visibility pop
