// SPDX-License-Identifier: Apache-2.0
// The timeline (trace.h, trace_recorder.h): what a traced Function records, zones on their own
// track, a ring that wraps, recording from several threads while snapshots are taken, and the
// Chrome trace event format the renderer writes. Graph times come from a FakeClock, so every
// figure is exact.
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "support/test_util.h"
#include "tscope/profile/report_html.h"
#include "tscope/profile/report_text.h"
#include "tscope/profile/trace_recorder.h"
#include "tscope/profile/zone_recorder.h"

namespace tscope {
namespace {

class Trace : public ::testing::Test {
 protected:
  void SetUp() override {
    profile::reset_trace();
    profile::set_tracing(true);
  }
  void TearDown() override {
    profile::set_tracing(false);
    profile::set_zones_enabled(false);
    profile::reset_host_zones();
    profile::reset_trace();
  }
};

std::vector<const profile::TraceSliceRecord*> slices_of(const profile::TraceRecord& trace,
                                                        const std::string& category) {
  std::vector<const profile::TraceSliceRecord*> found;
  for (const profile::TraceSliceRecord& slice : trace.slices) {
    if (trace.labels[static_cast<std::size_t>(slice.label)].category == category) {
      found.push_back(&slice);
    }
  }
  return found;
}

std::string arg_text(const profile::TraceLabelRecord& label, const std::string& key) {
  for (const profile::TraceArgRecord& arg : label.args) {
    if (arg.key == key) return arg.is_number ? std::to_string(arg.number) : arg.text;
  }
  return "<missing>";
}

Function traced_function(FakeClock* clock, const std::string& name) {
  Variable x = matrix(DType::Float32, "x");
  Variable w = matrix(DType::Float32, "w");
  FunctionOptions options;
  options.name = name;
  options.profile = true;
  options.clock = clock;
  return function({x, w}, {tanh(dot(x, w))}, {}, options);
}

TEST_F(Trace, EveryNodeRunsInsideItsCallWithNamesShapesAndCost) {
  FakeClock clock(1000);
  Function f = traced_function(&clock, "layer");
  const std::vector<Tensor> inputs = {testing::random_tensor(DType::Float32, {4, 3}, 1),
                                      testing::random_tensor(DType::Float32, {3, 5}, 2)};
  for (int i = 0; i < 3; ++i) (void)f(inputs);
  const profile::TraceRecord trace = profile::snapshot_trace();
  const profile::FunctionRecord record = f.profile_record();

  ASSERT_EQ(trace.threads.size(), 1U);
  EXPECT_EQ(trace.threads[0].name, "main");
  const auto calls = slices_of(trace, "function");
  const auto nodes = slices_of(trace, "node");
  ASSERT_EQ(calls.size(), 3U);
  ASSERT_EQ(nodes.size(), 3 * record.nodes.size());
  EXPECT_EQ(trace.recorded_event_count, static_cast<std::int64_t>(calls.size() + nodes.size()));
  EXPECT_EQ(trace.dropped_event_count, 0);
  EXPECT_EQ(trace.labels[static_cast<std::size_t>(calls[0]->label)].name, "layer");
  EXPECT_EQ(calls[0]->start_ns, 0);  // the timeline starts at the first event
  for (const profile::TraceSliceRecord* call : calls) {
    EXPECT_EQ(call->track, profile::TraceTrack::Graph);
    std::size_t inside = 0;
    for (const profile::TraceSliceRecord* node : nodes) {
      if (node->start_ns >= call->start_ns &&
          node->start_ns + node->duration_ns <= call->start_ns + call->duration_ns) {
        ++inside;
      }
    }
    EXPECT_EQ(inside, record.nodes.size());
  }
  // The fake clock advances 1000 ns per read and a node's time is two reads apart.
  for (const profile::TraceSliceRecord* node : nodes) EXPECT_EQ(node->duration_ns, 1000);
  // Every node's slice is named like its Apply row and carries what the profile knows of it.
  for (std::size_t k = 0; k < record.nodes.size(); ++k) {
    const profile::NodeRecord& row = record.nodes[k];
    const profile::TraceLabelRecord& label =
        trace.labels[static_cast<std::size_t>(nodes[k]->label)];
    EXPECT_EQ(label.name, row.apply_name);
    EXPECT_EQ(arg_text(label, "impl"), row.impl);
    EXPECT_EQ(arg_text(label, "class"), row.class_name);
    EXPECT_EQ(arg_text(label, "function"), "layer");
    EXPECT_EQ(arg_text(label, "site"), row.source_site);
    if (row.flops_per_call >= 0) {
      EXPECT_EQ(arg_text(label, "flops"), std::to_string(row.flops_per_call));
    }
  }
  const profile::TraceLabelRecord& product =
      trace.labels[static_cast<std::size_t>(nodes[0]->label)];
  EXPECT_EQ(arg_text(product, "shapes"), "float32[4,3] float32[3,5] -> float32[4,5]");
  // One live-bytes sample per node execution, in time order.
  EXPECT_EQ(trace.live_bytes.size(), nodes.size());
  for (std::size_t k = 1; k < trace.live_bytes.size(); ++k) {
    EXPECT_LE(trace.live_bytes[k - 1].time_ns, trace.live_bytes[k].time_ns);
  }
  EXPECT_GT(trace.live_bytes.front().live_bytes, 0);
}

TEST_F(Trace, UnprofiledFunctionsAndTracingOffRecordNothing) {
  Variable x = vector(DType::Float32, "x");
  Function plain = function({x}, {exp(x)});
  (void)plain({Tensor::zeros(DType::Float32, {4})});
  FakeClock clock(1000);
  Function profiled = traced_function(&clock, "off");
  profile::set_tracing(false);
  (void)profiled({Tensor::zeros(DType::Float32, {2, 2}), Tensor::zeros(DType::Float32, {2, 2})});
  EXPECT_TRUE(profile::snapshot_trace().slices.empty());
}

TEST_F(Trace, ZonesGoOnTheirOwnTrackAroundTheCallsTheyMake) {
  profile::set_zones_enabled(true);
  FakeClock clock(1000);
  Function f = traced_function(&clock, "step");
  const std::vector<Tensor> inputs = {Tensor::zeros(DType::Float32, {2, 2}),
                                      Tensor::zeros(DType::Float32, {2, 2})};
  {
    TSCOPE_ZONE("epoch");
    for (int i = 0; i < 2; ++i) {
      TSCOPE_ZONE("batch");
      (void)f(inputs);
    }
  }
  const profile::TraceRecord trace = profile::snapshot_trace();
  const auto zones = slices_of(trace, "zone");
  ASSERT_EQ(zones.size(), 3U);  // the graph call's own zone is on the graph track only
  for (const profile::TraceSliceRecord* zone : zones) {
    EXPECT_EQ(zone->track, profile::TraceTrack::Zones);
  }
  // Sorted parents first: the epoch, then its two batches.
  EXPECT_EQ(trace.labels[static_cast<std::size_t>(zones[0]->label)].name, "epoch");
  EXPECT_EQ(trace.labels[static_cast<std::size_t>(zones[1]->label)].name, "batch");
  EXPECT_NE(arg_text(trace.labels[static_cast<std::size_t>(zones[1]->label)], "site"), "<missing>");
  EXPECT_EQ(slices_of(trace, "function").size(), 2U);
}

TEST_F(Trace, AWrappedRingKeepsTheNewestEventsAndCountsTheRest) {
  profile::set_tracing(true, 0);  // the smallest ring: 1024 events
  const std::int64_t capacity = profile::trace_ring_capacity_events();
  ASSERT_EQ(capacity, 1024);
  FakeClock clock(1000);
  // A fresh thread, so its ring is made at the small size.
  std::thread([&] {
    Function f = traced_function(&clock, "wrap");
    const std::vector<Tensor> inputs = {Tensor::zeros(DType::Float32, {2, 2}),
                                        Tensor::zeros(DType::Float32, {2, 2})};
    for (int i = 0; i < 1000; ++i) (void)f(inputs);
  }).join();
  const profile::TraceRecord trace = profile::snapshot_trace();
  ASSERT_EQ(trace.threads.size(), 1U);
  EXPECT_EQ(trace.recorded_event_count, 1000 * 3);  // per call: two nodes and the call
  EXPECT_EQ(trace.dropped_event_count, trace.recorded_event_count - capacity);
  EXPECT_EQ(static_cast<std::int64_t>(trace.slices.size()), capacity);

  profile::Profile profile;
  profile.functions.emplace_back();
  profile.trace = profile::TraceSummary{"t.json", trace.recorded_event_count,
                                        trace.dropped_event_count, trace.ring_capacity_events};
  const std::string text = profile::render_text(profile, profile::TextReportOptions{});
  EXPECT_NE(text.find("  Timeline: 1024 events written to t.json (Chrome trace format)\n"),
            std::string::npos);
  EXPECT_NE(text.find("  Timeline: 1976 older events dropped: a thread's ring (1024 events) "
                      "wrapped; raise profiling.trace_buffer_mb to keep them\n"),
            std::string::npos);
}

TEST_F(Trace, SnapshotsWhileThreadsRecordSeeWholeEvents) {
  // The real clock: a FakeClock is not meant to be read from several threads.
  Function f = traced_function(nullptr, "shared");
  constexpr int kThreads = 3;
  constexpr int kCalls = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      const std::vector<Tensor> inputs = {Tensor::zeros(DType::Float32, {2, 2}),
                                          Tensor::zeros(DType::Float32, {2, 2})};
      for (int i = 0; i < kCalls; ++i) (void)f(inputs);
    });
  }
  for (int i = 0; i < 20; ++i) {
    const profile::TraceRecord trace = profile::snapshot_trace();
    for (const profile::TraceSliceRecord& slice : trace.slices) {
      ASSERT_GE(slice.duration_ns, 0);
      const profile::TraceLabelRecord& label = trace.labels[static_cast<std::size_t>(slice.label)];
      ASSERT_TRUE(label.category == "node" || label.category == "function") << label.category;
    }
  }
  for (std::thread& thread : threads) thread.join();
  const profile::TraceRecord trace = profile::snapshot_trace();
  EXPECT_EQ(trace.threads.size(), static_cast<std::size_t>(kThreads));
  EXPECT_EQ(trace.recorded_event_count, std::int64_t{kThreads} * kCalls * 3);
  EXPECT_EQ(trace.dropped_event_count, 0);
  EXPECT_EQ(slices_of(trace, "function").size(), static_cast<std::size_t>(kThreads * kCalls));
}

profile::TraceRecord small_trace() {
  profile::TraceRecord trace;
  trace.process_id = 42;
  trace.process_name = "train";
  trace.threads = {{0, 100, "main"}, {1, 101, ""}};
  trace.labels = {
      {"Dot22(x, \"w\")", "node", {{"impl", "blas", 0, false}, {"flops", "", 120, true}}},
      {"step", "function", {}},
      {"load \xff batch", "zone", {{"site", "loader.cpp:7", 0, false}}},
  };
  trace.slices = {{0, profile::TraceTrack::Graph, 0, 2500, 1},
                  {0, profile::TraceTrack::Graph, 500, 1234, 0},
                  {1, profile::TraceTrack::Zones, 100, 3000001, 2}};
  trace.live_bytes = {{1734, 4096}, {1800, 4096}, {2000, 0}};
  trace.recorded_event_count = 5;
  trace.dropped_event_count = 1;
  trace.ring_capacity_events = 1024;
  return trace;
}

TEST(TraceFormat, WritesTheChromeTraceEventFormat) {
  const std::string text = profile::render_chrome_trace(small_trace());
  const nlohmann::json json = nlohmann::json::parse(text);
  EXPECT_EQ(json["displayTimeUnit"], "ns");
  EXPECT_EQ(json["otherData"]["dropped_events"], 1);
  EXPECT_EQ(json["otherData"]["recorded_events"], 5);
  std::vector<nlohmann::json> complete, counters, metadata;
  for (const nlohmann::json& event : json["traceEvents"]) {
    // The fields every viewer requires.
    ASSERT_TRUE(event.contains("ph") && event.contains("pid") && event.contains("name")) << event;
    EXPECT_EQ(event["pid"], 42);
    const std::string phase = event["ph"];
    if (phase == "X") complete.push_back(event);
    if (phase == "C") counters.push_back(event);
    if (phase == "M") metadata.push_back(event);
  }
  ASSERT_EQ(complete.size(), 3U);
  EXPECT_EQ(complete[0]["name"], "step");
  EXPECT_EQ(complete[0]["tid"], 100);
  EXPECT_EQ(complete[0]["ts"], 0.0);
  EXPECT_EQ(complete[0]["dur"], 2.5);
  EXPECT_EQ(complete[1]["name"], "Dot22(x, \"w\")");
  EXPECT_EQ(complete[1]["cat"], "node");
  EXPECT_EQ(complete[1]["args"]["impl"], "blas");
  EXPECT_EQ(complete[1]["args"]["flops"], 120);
  EXPECT_NE(text.find("\"ts\":0.500,\"dur\":1.234"), std::string::npos);  // nanosecond decimals
  // A zone track has a thread id of its own, named after its thread.
  EXPECT_NE(complete[2]["tid"], 101);
  EXPECT_EQ(complete[2]["name"], "load \xef\xbf\xbd batch");  // invalid UTF-8 replaced
  EXPECT_EQ(complete[2]["dur"], 3000.001);
  // Equal consecutive samples are written once.
  ASSERT_EQ(counters.size(), 2U);
  EXPECT_EQ(counters[0]["args"]["bytes"], 4096);
  EXPECT_EQ(counters[1]["args"]["bytes"], 0);
  std::vector<std::string> titles;
  for (const nlohmann::json& event : metadata) {
    if (event["name"] == "thread_name" || event["name"] == "process_name") {
      titles.push_back(event["args"]["name"]);
    }
  }
  EXPECT_EQ(titles, (std::vector<std::string>{"train", "main", "thread 1 zones"}));
}

TEST(TraceFormat, AnEmptyTraceIsStillValid) {
  const nlohmann::json json = nlohmann::json::parse(profile::render_chrome_trace({}));
  ASSERT_EQ(json["traceEvents"].size(), 1U);  // the process name
  EXPECT_EQ(json["traceEvents"][0]["args"]["name"], "tscope");
}

TEST(TraceFormat, ReadsBackWhatItWrites) {
  const profile::TraceRecord written = small_trace();
  const profile::TraceRecord read =
      profile::parse_chrome_trace(profile::render_chrome_trace(written), "t.json");
  EXPECT_EQ(read.process_id, 42);
  EXPECT_EQ(read.process_name, "train");
  ASSERT_EQ(read.threads.size(), 2U);
  EXPECT_EQ(read.threads[0].os_thread_id, 100);
  EXPECT_EQ(read.threads[0].name, "main");
  ASSERT_EQ(read.slices.size(), written.slices.size());
  for (std::size_t k = 0; k < read.slices.size(); ++k) {
    EXPECT_EQ(read.slices[k].start_ns, written.slices[k].start_ns);
    EXPECT_EQ(read.slices[k].duration_ns, written.slices[k].duration_ns);
    EXPECT_EQ(read.slices[k].track, written.slices[k].track);
    const profile::TraceLabelRecord& label =
        read.labels[static_cast<std::size_t>(read.slices[k].label)];
    EXPECT_EQ(label.category,
              written.labels[static_cast<std::size_t>(written.slices[k].label)].category);
  }
  EXPECT_EQ(read.slices[2].thread_index, 1);
  EXPECT_EQ(read.live_bytes.size(), 2U);  // the repeated sample was not written
  EXPECT_EQ(read.dropped_event_count, 1);
}

void expect_parse_error(const std::string& text,
                        const std::string& path,
                        const std::string& message) {
  const Error error = testing::error_of([&] { (void)profile::parse_chrome_trace(text, path); });
  EXPECT_EQ(error.kind(), ErrorKind::Parse) << error.what();
  EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
}

TEST(TraceFormat, ABadFileIsNamedInTheError) {
  expect_parse_error("{\"traceEvents\": 3}", "bad.json", "'bad.json' is not a Chrome trace");
  expect_parse_error("not json", "text.json", "'text.json' is not valid JSON");
  expect_parse_error("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\"}]}", "partial.json",
                     "'partial.json': a trace event is malformed");
}

TEST(TraceHtml, TheReportDrawsTheLatestSlicesOfTheTimeline) {
  profile::Profile profile;
  profile.functions.emplace_back();
  profile.functions.back().name = "step";
  profile::TraceRecord trace = small_trace();
  const std::string without = profile::render_html(profile, {});
  EXPECT_EQ(without.find("id=\"timeline\""), std::string::npos);
  const std::string page = profile::render_html(profile, {.trace = &trace});
  const std::size_t section = page.find("<section id=\"timeline\">");
  ASSERT_NE(section, std::string::npos);
  const std::string timeline = page.substr(section, page.find("</section>", section) - section);
  EXPECT_NE(timeline.find("<svg class=\"chart timeline\""), std::string::npos);
  // One rectangle per slice, the lanes named after their threads, names escaped.
  std::size_t rects = 0;
  for (std::size_t at = timeline.find("<rect"); at != std::string::npos;
       at = timeline.find("<rect", at + 1)) {
    ++rects;
  }
  EXPECT_EQ(rects, trace.slices.size());
  EXPECT_NE(timeline.find(">main<"), std::string::npos);
  EXPECT_NE(timeline.find(">thread 1 zones<"), std::string::npos);
  EXPECT_NE(timeline.find("Dot22(x, &quot;w&quot;)"), std::string::npos);
  EXPECT_EQ(timeline.find("Dot22(x, \"w\")"), std::string::npos);
  EXPECT_NE(timeline.find("1 older events dropped"), std::string::npos);
  // A limit keeps the slices that overlap the latest starts: a slice over before them is left out.
  trace.slices.insert(trace.slices.begin() + 1, {0, profile::TraceTrack::Graph, 0, 100, 1});
  const std::string latest =
      profile::render_html(profile, {.trace = &trace, .n_timeline_slices = 1});
  EXPECT_NE(latest.find("3 of 4 slices"), std::string::npos);
}

}  // namespace
}  // namespace tscope
