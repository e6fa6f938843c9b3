// SPDX-License-Identifier: Apache-2.0
// Checks a timeline file as a viewer would read it: the Chrome trace event format's required
// fields on every event, at least one function call and one node, every node inside a call on
// the same track, and (with --zones) zone slices on tracks of their own.
//
//   tscope_check_trace FILE [--zones]
// Exit status 0 and a one-line summary when the file is valid; 1 and the first problem otherwise.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Span {
  double start = 0;
  double end = 0;
};

int fail(const std::string& problem) {
  std::cerr << "check_trace: " << problem << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return fail("usage: tscope_check_trace FILE [--zones]");
  const bool want_zones = argc > 2 && std::string(argv[2]) == "--zones";
  std::ifstream file(argv[1]);
  if (!file) return fail(std::string("cannot open ") + argv[1]);
  std::stringstream text;
  text << file.rdbuf();
  nlohmann::json trace;
  try {
    trace = nlohmann::json::parse(text.str());
  } catch (const std::exception& error) {
    return fail(std::string("not JSON: ") + error.what());
  }
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    return fail("no traceEvents array");
  }
  std::map<long long, std::vector<Span>> calls_by_track;
  std::map<long long, std::vector<Span>> nodes_by_track;
  std::map<long long, int> zones_by_track;
  long long counters = 0;
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (!event.contains("ph") || !event.contains("pid") || !event.contains("name")) {
      return fail("an event lacks ph, pid or name: " + event.dump());
    }
    const std::string phase = event["ph"];
    if (phase == "X") {
      for (const char* field : {"tid", "ts", "dur", "cat"}) {
        if (!event.contains(field)) return fail(std::string("a slice lacks ") + field);
      }
      const double start = event["ts"];
      const double duration = event["dur"];
      if (duration < 0) return fail("a negative duration: " + event.dump());
      const long long track = event["tid"];
      const std::string category = event["cat"];
      if (category == "function") calls_by_track[track].push_back({start, start + duration});
      if (category == "node") nodes_by_track[track].push_back({start, start + duration});
      if (category == "zone") ++zones_by_track[track];
    } else if (phase == "C") {
      if (!event.contains("ts") || !event.contains("args")) return fail("a counter lacks ts/args");
      ++counters;
    } else if (phase != "M") {
      return fail("unexpected phase " + phase);
    }
  }
  long long calls = 0, nodes = 0, zones = 0;
  for (auto& [track, spans] : calls_by_track) {
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.start < b.start; });
    calls += static_cast<long long>(spans.size());
  }
  for (const auto& [track, spans] : nodes_by_track) {
    const std::vector<Span>& enclosing = calls_by_track[track];
    for (const Span& node : spans) {
      // The last call starting at or before the node must contain it (microsecond decimals).
      auto after =
          std::upper_bound(enclosing.begin(), enclosing.end(), node.start,
                           [](double time, const Span& call) { return time < call.start; });
      if (after == enclosing.begin() || std::prev(after)->end + 1e-3 < node.end) {
        return fail("a node slice at " + std::to_string(node.start) + " us is outside every call");
      }
      ++nodes;
    }
  }
  for (const auto& [track, count] : zones_by_track) {
    if (calls_by_track.count(track) != 0 || nodes_by_track.count(track) != 0) {
      return fail("zones share a track with graph slices");
    }
    zones += count;
  }
  if (calls == 0 || nodes == 0) return fail("no function call or no node slice");
  if (want_zones && zones == 0) return fail("no zone slice");
  std::printf("trace ok: %lld calls, %lld nodes, %lld zones, %lld live-bytes samples\n", calls,
              nodes, zones, counters);
  return 0;
}
