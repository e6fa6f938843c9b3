// SPDX-License-Identifier: Apache-2.0
// Reading a timeline back (trace.h): the Chrome trace files this library writes, so a saved
// trace can be drawn in the HTML report later (`tscope report --html OUT --trace FILE`).
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "tscope/core/error.h"
#include "tscope/profile/trace.h"

namespace tscope::profile {
namespace {

std::int64_t to_ns(const nlohmann::json& microseconds) {
  return static_cast<std::int64_t>(std::llround(microseconds.get<double>() * 1000.0));
}

}  // namespace

TraceRecord parse_chrome_trace(std::string_view text, const std::string& path) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    throw_error(ErrorKind::Parse, "'{}' is not valid JSON: {}", path, error.what());
  }
  if (!json.is_object() || !json.contains("traceEvents") || !json["traceEvents"].is_array()) {
    throw_error(ErrorKind::Parse, "'{}' is not a Chrome trace: no traceEvents array", path);
  }
  TraceRecord trace;
  std::map<std::int64_t, std::int64_t> thread_of_tid;  // graph-track thread id -> index
  std::map<std::int64_t, std::string> names;           // tid -> thread_name
  auto thread_index = [&](std::int64_t tid) {
    const std::int64_t os_tid = tid >= kZoneTrackIdOffset ? tid - kZoneTrackIdOffset : tid;
    auto [it, inserted] =
        thread_of_tid.try_emplace(os_tid, static_cast<std::int64_t>(trace.threads.size()));
    if (inserted) trace.threads.push_back(TraceThreadRecord{it->second, os_tid, ""});
    return it->second;
  };
  std::map<std::string, std::int64_t> label_of;  // name, category and args, as JSON text
  try {
    for (const nlohmann::json& event : json["traceEvents"]) {
      const std::string phase = event.value("ph", "");
      if (phase == "M") {
        const std::string kind = event.value("name", "");
        if (kind == "process_name") {
          trace.process_id = event.value("pid", std::int64_t{0});
          trace.process_name = event["args"].value("name", "");
        } else if (kind == "thread_name" &&
                   event.value("tid", std::int64_t{0}) < kZoneTrackIdOffset) {
          names[event.value("tid", std::int64_t{0})] = event["args"].value("name", "");
        }
      } else if (phase == "X") {
        const std::int64_t tid = event.at("tid").get<std::int64_t>();
        nlohmann::json args = event.contains("args") ? event["args"] : nlohmann::json::object();
        const std::string key =
            nlohmann::json::array({event.value("name", ""), event.value("cat", ""), args}).dump();
        auto [label, inserted] =
            label_of.try_emplace(key, static_cast<std::int64_t>(trace.labels.size()));
        if (inserted) {
          TraceLabelRecord record{event.value("name", ""), event.value("cat", ""), {}};
          for (const auto& [arg, value] : args.items()) {
            if (value.is_number()) {
              record.args.push_back(TraceArgRecord{arg, {}, value.get<double>(), true});
            } else {
              record.args.push_back(TraceArgRecord{
                  arg, value.is_string() ? value.get<std::string>() : value.dump(), 0, false});
            }
          }
          trace.labels.push_back(std::move(record));
        }
        trace.slices.push_back(TraceSliceRecord{
            thread_index(tid), tid >= kZoneTrackIdOffset ? TraceTrack::Zones : TraceTrack::Graph,
            to_ns(event.at("ts")), to_ns(event.at("dur")), label->second});
      } else if (phase == "C") {
        trace.live_bytes.push_back(TraceCounterRecord{
            to_ns(event.at("ts")), event.at("args").value("bytes", std::int64_t{0})});
      }
    }
    if (json.contains("otherData")) {
      const nlohmann::json& other = json["otherData"];
      trace.recorded_event_count = other.value("recorded_events", std::int64_t{0});
      trace.dropped_event_count = other.value("dropped_events", std::int64_t{0});
      trace.ring_capacity_events = other.value("ring_capacity_events", std::int64_t{0});
    }
  } catch (const nlohmann::json::exception& error) {
    throw_error(ErrorKind::Parse, "'{}': a trace event is malformed: {}", path, error.what());
  }
  for (TraceThreadRecord& thread : trace.threads) {
    if (const auto it = names.find(thread.os_thread_id); it != names.end())
      thread.name = it->second;
  }
  order_trace_slices(trace.slices);
  return trace;
}

}  // namespace tscope::profile
