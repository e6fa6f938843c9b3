// SPDX-License-Identifier: Apache-2.0
// The HTML report's timeline (trace.h): the most recent stretch of a recorded trace, drawn as SVG
// lanes, one per thread track, with nested slices stacked and the live bytes below. A whole trace
// can hold hundreds of thousands of slices, more than a page should draw; Perfetto opens the
// whole file.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>

#include "report_html_sections.h"
#include "tscope/profile/html_page.h"

namespace tscope::profile::detail {
namespace {

constexpr int kChartWidth = 1100;
constexpr int kLaneLeft = 170;
constexpr int kLaneRight = 1090;
constexpr int kRowHeight = 16;
constexpr int kMaxDepth = 12;  // deeper slices are drawn on the last row
constexpr int kCounterHeight = 60;

struct Lane {
  std::int64_t thread = 0;
  TraceTrack track = TraceTrack::Graph;
  std::vector<std::pair<const TraceSliceRecord*, int>> slices;  // with their depth
  int depth = 1;
};

std::string lane_title(const TraceRecord& trace, const Lane& lane) {
  const auto thread = static_cast<std::size_t>(lane.thread);
  std::string name = thread < trace.threads.size() && !trace.threads[thread].name.empty()
                         ? trace.threads[thread].name
                         : fmt::format("thread {}", lane.thread);
  return lane.track == TraceTrack::Zones ? name + " zones" : name;
}

int colour_of(const TraceLabelRecord& label) {
  if (label.category == "function") return 0;
  if (label.category == "zone") return 2;
  std::string key = label.name;
  for (const TraceArgRecord& arg : label.args) {
    if (arg.key == "class") key = arg.text;
  }
  std::size_t hash = 0;
  for (char c : key) hash = hash * 31 + static_cast<unsigned char>(c);
  // Nodes take every colour but the calls' and the zones'.
  constexpr int kNodeColours[] = {1, 3, 4, 5, 6, 7};
  return kNodeColours[hash % std::size(kNodeColours)];
}

std::string tooltip(const TraceLabelRecord& label, const TraceSliceRecord& slice) {
  std::string text = fmt::format("{}\n{} {}", label.name, label.category,
                                 format_duration(static_cast<double>(slice.duration_ns)));
  for (const TraceArgRecord& arg : label.args) {
    text += "\n" + arg.key + ": " + (arg.is_number ? fmt::format("{}", arg.number) : arg.text);
  }
  return text;
}

}  // namespace

HtmlSection html_timeline_section(const TraceRecord& trace, int max_slices) {
  HtmlSection section{.id = "timeline", .heading = "Timeline"};
  std::string& out = section.html;
  if (trace.slices.empty()) {
    out += "<p class=\"note\">The trace holds no slice.</p>\n";
    return section;
  }
  // The window: the latest `max_slices` slice starts, and everything that overlaps them.
  std::vector<std::int64_t> starts;
  std::int64_t end_ns = 0;
  for (const TraceSliceRecord& slice : trace.slices) {
    starts.push_back(slice.start_ns);
    end_ns = std::max(end_ns, slice.start_ns + slice.duration_ns);
  }
  std::sort(starts.begin(), starts.end());
  const std::size_t keep =
      std::min(starts.size(), static_cast<std::size_t>(std::max(max_slices, 1)));
  const std::int64_t window_start = starts[starts.size() - keep];
  const double span_ns = static_cast<double>(std::max<std::int64_t>(end_ns - window_start, 1));
  const double ns_to_px = (kLaneRight - kLaneLeft) / span_ns;

  // Lanes in the model's order (by thread, then track); depth from the slices still open.
  std::vector<Lane> lanes;
  std::map<std::pair<std::int64_t, TraceTrack>, std::size_t> lane_of;
  std::map<std::size_t, std::vector<std::int64_t>> open_ends;
  std::size_t drawn = 0;
  for (const TraceSliceRecord& slice : trace.slices) {
    const std::int64_t slice_end = slice.start_ns + slice.duration_ns;
    if (slice_end < window_start) continue;
    const auto key = std::make_pair(slice.thread_index, slice.track);
    auto [it, inserted] = lane_of.try_emplace(key, lanes.size());
    if (inserted) lanes.push_back(Lane{slice.thread_index, slice.track, {}, 1});
    std::vector<std::int64_t>& ends = open_ends[it->second];
    while (!ends.empty() && ends.back() <= slice.start_ns) ends.pop_back();
    const int depth = std::min(static_cast<int>(ends.size()), kMaxDepth - 1);
    ends.push_back(slice_end);
    Lane& lane = lanes[it->second];
    lane.slices.emplace_back(&slice, depth);
    lane.depth = std::max(lane.depth, depth + 1);
    ++drawn;
  }

  int height = 24;
  for (const Lane& lane : lanes) height += lane.depth * kRowHeight + 8;
  const bool has_counter = !trace.live_bytes.empty();
  if (has_counter) height += kCounterHeight + 8;
  const std::string caption = fmt::format(
      "The last {} of the trace ({} recorded): {} of {} slices{}", format_duration(span_ns),
      format_duration(static_cast<double>(end_ns)), drawn, trace.slices.size(),
      trace.dropped_event_count > 0
          ? fmt::format(", {} older events dropped by the recorder", trace.dropped_event_count)
          : std::string());
  out += "<p class=\"note\">" + escape_html(caption) +
         ". The whole trace opens in Perfetto (ui.perfetto.dev) or chrome://tracing.</p>\n";
  out += fmt::format(
      "<figure><svg class=\"chart timeline\" role=\"img\" viewBox=\"0 0 {} {}\" width=\"{}\" "
      "height=\"{}\" xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>\n",
      kChartWidth, height, kChartWidth, height, escape_html(caption));
  for (int tick = 0; tick <= 4; ++tick) {
    const double x = kLaneLeft + (kLaneRight - kLaneLeft) * tick / 4.0;
    out += fmt::format(
        "<line class=\"grid\" x1=\"{:.1f}\" y1=\"16\" x2=\"{:.1f}\" y2=\"{}\"/>"
        "<text class=\"value\" x=\"{:.1f}\" y=\"12\" text-anchor=\"middle\">+{}</text>\n",
        x, x, height, x, escape_html(format_duration(span_ns * tick / 4.0)));
  }
  int y = 24;
  for (const Lane& lane : lanes) {
    out += fmt::format("<text class=\"value\" x=\"4\" y=\"{}\">{}</text>\n", y + 12,
                       escape_html(shorten(lane_title(trace, lane), 24)));
    for (const auto& [slice, depth] : lane.slices) {
      const double from = std::max<double>(static_cast<double>(slice->start_ns - window_start), 0);
      const double to = static_cast<double>(slice->start_ns + slice->duration_ns - window_start);
      const double x = kLaneLeft + from * ns_to_px;
      const double width = std::max((to - from) * ns_to_px, 0.5);
      const TraceLabelRecord& label = trace.labels[static_cast<std::size_t>(slice->label)];
      out += fmt::format(
          "<g><title>{}</title><rect class=\"frame c{}\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" "
          "height=\"{}\"/>",
          escape_html(tooltip(label, *slice)), colour_of(label), x, y + depth * kRowHeight, width,
          kRowHeight - 1);
      const auto fits = static_cast<std::size_t>(width / 6.5);
      if (fits >= 4) {
        out += fmt::format("<text class=\"frame\" x=\"{:.2f}\" y=\"{}\">{}</text>", x + 3,
                           y + depth * kRowHeight + 12, escape_html(shorten(label.name, fits)));
      }
      out += "</g>\n";
    }
    y += lane.depth * kRowHeight + 8;
  }
  if (has_counter) {
    std::int64_t top = 1;
    for (const TraceCounterRecord& sample : trace.live_bytes)
      top = std::max(top, sample.live_bytes);
    auto y_of = [&](std::int64_t bytes) {
      return y + kCounterHeight -
             kCounterHeight * static_cast<double>(bytes) / static_cast<double>(top);
    };
    out += fmt::format("<text class=\"value\" x=\"4\" y=\"{}\">live bytes (max {})</text>\n",
                       y + 12, escape_html(format_bytes(static_cast<double>(top))));
    std::string points;
    double last_y = y_of(0);
    bool started = false;
    for (const TraceCounterRecord& sample : trace.live_bytes) {
      if (sample.time_ns < window_start) {
        last_y = y_of(sample.live_bytes);
        continue;
      }
      const double x = kLaneLeft + static_cast<double>(sample.time_ns - window_start) * ns_to_px;
      if (!started) points += fmt::format("{},{:.1f} ", kLaneLeft, last_y);
      started = true;
      points += fmt::format("{:.1f},{:.1f} {:.1f},{:.1f} ", x, last_y, x, y_of(sample.live_bytes));
      last_y = y_of(sample.live_bytes);
    }
    points += fmt::format("{},{:.1f}", kLaneRight, last_y);
    out += fmt::format("<polyline class=\"live\" points=\"{}\"/>\n", points);
  }
  out += "</svg></figure>\n";
  section.charts = 1;
  return section;
}

}  // namespace tscope::profile::detail
