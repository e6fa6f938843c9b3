// SPDX-License-Identifier: Apache-2.0
// The Chrome trace event format writer (trace.h). A trace holds hundreds of thousands of slices
// over a few hundred labels, so each label's name, category and args are escaped once and every
// slice reuses the fragment.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>
#include <tuple>

#include "tscope/profile/trace.h"

namespace tscope::profile {
namespace {

std::string quoted(const std::string& text) {
  // Names come from user code and model files: invalid UTF-8 is replaced, never a throw.
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Microseconds with the nanoseconds as decimals, without a round trip through double.
void append_microseconds(std::string& out, std::int64_t ns) {
  const char* sign = ns < 0 ? "-" : "";
  const std::int64_t magnitude = ns < 0 ? -ns : ns;
  fmt::format_to(std::back_inserter(out), "{}{}.{:03}", sign, magnitude / 1000, magnitude % 1000);
}

std::string label_fragment(const TraceLabelRecord& label) {
  std::string out =
      fmt::format("\"name\":{},\"cat\":{}", quoted(label.name), quoted(label.category));
  if (label.args.empty()) return out;
  out += ",\"args\":{";
  bool first = true;
  for (const TraceArgRecord& arg : label.args) {
    if (!first) out += ',';
    first = false;
    out += quoted(arg.key);
    out += ':';
    if (!arg.is_number) {
      out += quoted(arg.text);
    } else if (std::isfinite(arg.number)) {
      fmt::format_to(std::back_inserter(out), "{}", arg.number);
    } else {
      out += "null";
    }
  }
  out += '}';
  return out;
}

std::int64_t track_id(const TraceThreadRecord& thread, TraceTrack track) {
  return track == TraceTrack::Graph ? thread.os_thread_id
                                    : thread.os_thread_id + kZoneTrackIdOffset;
}

std::string thread_title(const TraceThreadRecord& thread) {
  return thread.name.empty() ? fmt::format("thread {}", thread.thread_index) : thread.name;
}

}  // namespace

void order_trace_slices(std::vector<TraceSliceRecord>& slices) {
  std::stable_sort(slices.begin(), slices.end(),
                   [](const TraceSliceRecord& a, const TraceSliceRecord& b) {
                     return std::tie(a.thread_index, a.track, a.start_ns, b.duration_ns) <
                            std::tie(b.thread_index, b.track, b.start_ns, a.duration_ns);
                   });
}

std::string render_chrome_trace(const TraceRecord& trace) {
  std::string out;
  out.reserve(256 + trace.slices.size() * 128 + trace.live_bytes.size() * 64);
  out += "{\"displayTimeUnit\":\"ns\",\"otherData\":{";
  fmt::format_to(std::back_inserter(out),
                 "\"recorded_events\":{},\"dropped_events\":{},\"ring_capacity_events\":{}}},",
                 trace.recorded_event_count, trace.dropped_event_count, trace.ring_capacity_events);
  out += "\"traceEvents\":[";
  const std::int64_t pid = trace.process_id;
  fmt::format_to(std::back_inserter(out),
                 "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,"
                 "\"args\":{{\"name\":{}}}}}",
                 pid, quoted(trace.process_name.empty() ? "tscope" : trace.process_name));
  // Which tracks have slices: only those get a name.
  std::vector<bool> has_zones(trace.threads.size(), false);
  std::vector<bool> has_graph(trace.threads.size(), false);
  for (const TraceSliceRecord& slice : trace.slices) {
    const auto thread = static_cast<std::size_t>(slice.thread_index);
    if (thread >= trace.threads.size()) continue;
    (slice.track == TraceTrack::Zones ? has_zones : has_graph)[thread] = true;
  }
  for (std::size_t index = 0; index < trace.threads.size(); ++index) {
    const TraceThreadRecord& thread = trace.threads[index];
    for (const TraceTrack track : {TraceTrack::Graph, TraceTrack::Zones}) {
      if (!(track == TraceTrack::Zones ? has_zones : has_graph)[index]) continue;
      const std::string title =
          track == TraceTrack::Zones ? thread_title(thread) + " zones" : thread_title(thread);
      const std::int64_t tid = track_id(thread, track);
      fmt::format_to(std::back_inserter(out),
                     ",{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},"
                     "\"args\":{{\"name\":{}}}}}",
                     pid, tid, quoted(title));
      fmt::format_to(std::back_inserter(out),
                     ",{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{},\"tid\":{},"
                     "\"args\":{{\"sort_index\":{}}}}}",
                     pid, tid, 2 * thread.thread_index + (track == TraceTrack::Zones ? 1 : 0));
    }
  }
  std::vector<std::string> fragments;
  fragments.reserve(trace.labels.size());
  for (const TraceLabelRecord& label : trace.labels) fragments.push_back(label_fragment(label));
  for (const TraceSliceRecord& slice : trace.slices) {
    const auto thread = static_cast<std::size_t>(slice.thread_index);
    const auto label = static_cast<std::size_t>(slice.label);
    if (thread >= trace.threads.size() || label >= fragments.size()) continue;
    fmt::format_to(std::back_inserter(out), ",{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":", pid,
                   track_id(trace.threads[thread], slice.track));
    append_microseconds(out, slice.start_ns);
    out += ",\"dur\":";
    append_microseconds(out, slice.duration_ns);
    out += ',';
    out += fragments[label];
    out += '}';
  }
  std::int64_t last_live = -1;
  for (const TraceCounterRecord& counter : trace.live_bytes) {
    if (counter.live_bytes == last_live) continue;  // a flat stretch needs no new sample
    last_live = counter.live_bytes;
    fmt::format_to(std::back_inserter(out),
                   ",{{\"ph\":\"C\",\"name\":\"live bytes\",\"pid\":{},\"ts\":", pid);
    append_microseconds(out, counter.time_ns);
    fmt::format_to(std::back_inserter(out), ",\"args\":{{\"bytes\":{}}}}}", counter.live_bytes);
  }
  out += "]}\n";
  return out;
}

}  // namespace tscope::profile
